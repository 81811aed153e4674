package io.sluice.ingest.internal;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.TopicPartition;
import io.sluice.ingest.Guarantee;
import io.sluice.ingest.IngestException;
import io.sluice.redis.StreamEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * The stream strategies' drain to ClickHouse as a {@link BatchSink} of {@link IngestEngine}, fed by a
 * {@link StreamGroupConsumer}: a batch is a run of stream entries (its identity: its first and last entry id, and
 * its first row names its INSERT's query id), turned into rows by {@link EntryBatch} when it is inserted. The engine
 * then commits it, which acknowledges its entries ({@code XACK}), in order, only after it landed.
 *
 * <p>Landing one batch, on an insert thread: rows of redelivered entries (taken over, or re-read after an error)
 * already in ClickHouse are left out when the table has {@code _sluice_entry, _sluice_index} columns; malformed
 * entries and refused events are dead-lettered first; then one INSERT (retried, bisected, dead-lettered by
 * {@link BatchInserter}), idempotent at the server with entry columns: a timed-out INSERT that still runs, or
 * arrives late, cannot double a row, and two attempts of a batch never run at once (one query id).
 *
 * <p>Guarantee: no loss — an entry is acknowledged only after its rows are in ClickHouse (or dead-lettered).
 * Duplicates: a worker killed between the INSERT and the XACK leaves entries that are taken over and inserted
 * again; with entry columns their rows already in the table are skipped (exactly-once rows), without them the
 * duplicates are bounded by the batches in flight at the crash (at-least-once).
 */
final class EntryBatches implements BatchSink<EntryBatches.Entries> {
    private static final Logger LOG = LoggerFactory.getLogger(EntryBatches.class);

    /** The entries of one batch, in stream order. */
    static final class Entries {
        final List<EntryLedger.Held> held;
        int bytes;
        int events;

        Entries(int entriesHint) {
            this.held = new ArrayList<>(entriesHint);
        }
    }

    private final SinkContext ctx;
    private final String stream;
    private final EntryLedger ledger;
    private final BatchInserter inserter;
    private final DeadLetters deadLetters;
    /** Non-null when the table has the entry columns. */
    private final IdempotentInsert idempotent;

    EntryBatches(SinkContext ctx, String stream, EntryLedger ledger, BatchInserter inserter, DeadLetters deadLetters) {
        this.ctx = ctx;
        this.stream = stream;
        this.ledger = ledger;
        this.inserter = inserter;
        this.deadLetters = deadLetters;
        this.idempotent = inserter.format().provenance() == RowFormat.Provenance.ENTRIES
                ? new IdempotentInsert(ctx.target, ctx.config.rowEncoder(), RowFormat.Provenance.ENTRIES) : null;
    }

    @Override
    public void open() {
        // the target was opened and checked when the strategy's sink was built
    }

    @Override
    public Guarantee guarantee() {
        return idempotent != null ? Guarantee.EXACTLY_ONCE_ENTRY_COLUMNS : Guarantee.AT_LEAST_ONCE;
    }

    @Override
    public Map<String, Number> metrics() {
        return ctx.metrics.snapshot();
    }

    @Override
    public String lastFailure() {
        return null;
    }

    @Override
    public Entries newBatch(int rowsHint, int bytesHint) {
        return new Entries(Math.min(rowsHint, 4096));
    }

    @Override
    public int bytes(Entries batch) {
        return batch.bytes;
    }

    /** Events of the batch's entries: a batch is full at {@code batch.rows} events, however many entries hold them. */
    @Override
    public int rows(Entries batch) {
        return batch.events;
    }

    @Override
    public boolean add(Entries batch, ConsumerRecord record) {
        EntryLedger.Held h = ledger.get(record.offset());
        batch.held.add(h);
        StreamEntry e = h.entry();
        for (byte[] event : e.events()) {
            batch.bytes += event.length;
        }
        batch.events += Math.max(1, e.events().size());
        return true;
    }

    @Override
    public void insert(TopicPartition partition, long from, long to, Entries batch, BooleanSupplier abandoned) {
        List<StreamEntry> entries = new ArrayList<>(batch.held.size());
        List<String> redelivered = new ArrayList<>();
        for (EntryLedger.Held h : batch.held) {
            entries.add(h.entry());
            if (h.redelivered()) {
                redelivered.add(h.entry().id());
            }
            if (h.entry().isMalformed()) {
                LOG.warn("stream {}: {}; dead-lettering the entry", stream, h.entry().malformed().getMessage());
            }
        }
        BooleanSupplier stop = () -> abandoned.getAsBoolean() || ctx.givingUp();
        Set<String> landed = idempotent != null && !redelivered.isEmpty() ? landedRowsWithRetry(redelivered, stop) : Set.of();
        EntryBatch rows = EntryBatch.of(stream, entries, inserter.format(), landed);
        if (!rows.letters.isEmpty()) {
            deadLetters.write(rows.letters);
            ctx.metrics.deadLettered(rows.letters.size());
        }
        if (rows.skipped > 0) {
            ctx.metrics.duplicatesSkipped(rows.skipped);
            LOG.info("stream {}: {} rows of {} redelivered entries were already in {}; not inserting them again",
                    stream, rows.skipped, redelivered.size(), ctx.config.table());
        }
        Function<RowBatch<EntryBatch.Origin>, IdempotentInsert.Statement> statement = idempotent == null ? null
                : b -> idempotent.entries(EntryBatch.queryId(ctx.config.table(), stream, b));
        // No landed-rows check before a retry: the INSERT that timed out may still be running on the server, so a
        // check then could find nothing and the retry would double the rows. The retry is idempotent instead.
        inserter.insert(rows.rows, (b, failure) -> b, o -> stream + "/" + o, Map.of(), statement, stop);
    }

    /**
     * The landed check, retried like the INSERT after it (until {@code stop}): a batch failing here would restart the
     * engine and abandon the batches in flight, whose INSERTs could then land after their entries' re-check.
     */
    private Set<String> landedRowsWithRetry(List<String> entryIds, BooleanSupplier stop) {
        Backoff backoff = new Backoff(ctx.config.retryInitialMs(), ctx.config.retryMaxMs());
        while (true) {
            try {
                return landedRows(entryIds);
            } catch (IngestException e) {
                if (stop.getAsBoolean()) {
                    throw e;
                }
                LOG.warn("stream {}: cannot check which rows of {} redelivered entries landed yet: {}", stream, entryIds.size(),
                        e.getMessage());
                try {
                    backoff.pause(stop);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** Rows of these entries already in the table, as "entryId#index". */
    private Set<String> landedRows(List<String> entryIds) {
        Set<String> out = new HashSet<>();
        for (int from = 0; from < entryIds.size(); from += 1_000) {
            StringBuilder in = new StringBuilder();
            for (String id : entryIds.subList(from, Math.min(entryIds.size(), from + 1_000))) {
                in.append(in.length() == 0 ? "'" : ",'").append(id).append('\'');
            }
            String body = ctx.http.query("SELECT " + ClickHouseTarget.ENTRY_COLUMN + ", " + ClickHouseTarget.INDEX_COLUMN
                    + " FROM " + ctx.config.table() + " WHERE " + ClickHouseTarget.ENTRY_COLUMN + " IN (" + in + ") FORMAT TabSeparated");
            for (String line : ClickHouseTarget.lines(body)) {
                out.add(line.replace('\t', '#'));
            }
        }
        return out;
    }

    /** The strategy's sink owns the ClickHouse context and closes it. */
    @Override
    public void close() {
    }
}
