package io.sluice.ingest.internal;

import io.sluice.redis.DeadLetterStream;
import io.sluice.redis.StreamEntry;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A batch of the stream strategies: entries read from Redis turned into rows, and what the batch's landing then
 * acknowledges. The decisions of the stream strategies ({@link EntryBatches}) about what a batch is, apart from Redis and ClickHouse (so they
 * have server-less tests, {@code EntryBatchTest}):
 * <ul>
 *   <li>a row is identified by its entry id and its index in the entry ({@link Origin}; the
 *       {@code _sluice_entry, _sluice_index} columns when the table has them);</li>
 *   <li>a row of a redelivered entry already in the table ({@code landed}, {@code "<id>#<index>"}) is skipped;</li>
 *   <li>an entry whose packed field does not parse is one dead letter ({@link DeadLetterStream#lettersOf}), an event
 *       the row format refuses is one; both are acknowledged with the batch, never retried;</li>
 *   <li>every entry read is acknowledged once the batch landed ({@link #ids}), including those that made no row;</li>
 *   <li>the batch's identity is its first row: the query id of its idempotent INSERT ({@link #queryId}).</li>
 * </ul>
 */
final class EntryBatch {

    /** A row's origin: its stream entry and its position in the entry. */
    record Origin(String entryId, int index) {
        @Override
        public String toString() {
            return entryId + "#" + index;
        }
    }

    final RowBatch<Origin> rows;
    /** Malformed entries and refused events, to dead-letter before the INSERT. */
    final List<DeadLetters.Letter> letters;
    /** Every entry of the batch, to acknowledge once it landed. */
    final String[] ids;
    /** Events the entries hold (malformed entries count none). */
    final int events;
    /** Rows skipped as already in the table. */
    final int skipped;

    private EntryBatch(RowBatch<Origin> rows, List<DeadLetters.Letter> letters, String[] ids, int events, int skipped) {
        this.rows = rows;
        this.letters = letters;
        this.ids = ids;
        this.events = events;
        this.skipped = skipped;
    }

    /**
     * @param landed rows of these entries already in the table, as {@code "<entry id>#<index>"} (empty unless the
     *               entries were delivered before and the table has entry columns)
     */
    static EntryBatch of(String stream, List<StreamEntry> entries, RowFormat format, Set<String> landed) {
        RowBatch<Origin> rows = new RowBatch<>(entries.size() * 16, entries.size() * 4096);
        List<DeadLetters.Letter> letters = new ArrayList<>();
        String[] ids = new String[entries.size()];
        int events = 0;
        int skipped = 0;
        for (int i = 0; i < entries.size(); i++) {
            StreamEntry m = entries.get(i);
            ids[i] = m.id();
            if (m.isMalformed()) {
                // it fails the same way on every read: set aside (acknowledged with the batch), never retried
                for (DeadLetterStream.Letter l : DeadLetterStream.lettersOf(stream, m, null, null, 0)) {
                    letters.add(new DeadLetters.Letter(l.payload(), l.error(), l.source()));
                }
                continue;
            }
            List<byte[]> evs = m.events();
            events += evs.size();
            for (int k = 0; k < evs.size(); k++) {
                if (!landed.isEmpty() && landed.contains(m.id() + "#" + k)) {
                    skipped++;
                    continue;
                }
                try {
                    format.append(rows, format.encode(evs.get(k)), m.id(), k, new Origin(m.id(), k));
                } catch (IllegalArgumentException e) {
                    letters.add(new DeadLetters.Letter(evs.get(k), e.getMessage(), stream + "/" + m.id() + "#" + k));
                }
            }
        }
        return new EntryBatch(rows, letters, ids, events, skipped);
    }

    /**
     * The query id of a batch's (idempotent) INSERT: named by its first row, so every attempt of the batch, and of a
     * bisected half starting there, shares it: two attempts never run at once, and a late one is recognised.
     */
    static String queryId(String table, String stream, RowBatch<Origin> rows) {
        Origin first = rows.tag(0);
        return "sluice-" + table + "-" + stream + "-" + first.entryId() + "-" + first.index();
    }

    /**
     * Entries to ask Redis for so that a batch holds about {@code batchRows} events, given the events per entry seen
     * so far (Sluice's entries pack up to {@link io.sluice.redis.StreamWriter#EVENTS_PER_ENTRY}, other writers' hold
     * one): at least 1, at most {@code batchRows}.
     */
    static int entriesFor(int batchRows, double eventsPerEntry) {
        return (int) Math.max(1, Math.min(batchRows, batchRows / Math.max(1.0, eventsPerEntry)));
    }
}
