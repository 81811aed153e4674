package io.sluice.ingest.internal;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.TopicPartition;
import io.sluice.redis.DeadLetterStream;
import io.sluice.redis.GroupReader;
import io.sluice.redis.RedisEndpoint;
import io.sluice.redis.RedisStreamException;
import io.sluice.redis.StreamEntry;
import io.sluice.redis.StreamWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;

/**
 * The stream strategies' source for {@link IngestEngine}: one member of the stream's consumer group as a
 * {@link Consumer} of one partition (the stream), reading through redis-transport's {@link GroupReader} on its own
 * connection (one Redis server or a cluster). The engine batches, inserts and commits; this member maps that onto
 * the group (bookkeeping in {@link EntryLedger}):
 * <ul>
 *   <li>{@link #poll}: records held back by a {@link #seek} first (hold and retry: a shared group has no seek);
 *       otherwise every {@code redis.claim.idle.ms / 2} a step of {@code XAUTOCLAIM} of entries idle at any member
 *       (a dead worker, or this process before a crash), through redis-transport's one claim path
 *       ({@link GroupReader#claimIdle(String, long, int, int, DeadLetterStream)}): an entry delivered more than
 *       {@code redis.max.deliveries} times goes to the dead-letter stream instead; then, after a failure, this
 *       member's own pending entries ({@code XREADGROUP ... 0}: a reply lost with the connection must not leave
 *       entries waiting for the takeover timeout); then {@code XREADGROUP ... >} new entries;</li>
 *   <li>every {@code redis.claim.idle.ms / 4}, in {@link #poll}: {@code XCLAIM JUSTID} of every entry held (the
 *       engine polls at least that often), so that entries whose INSERT runs or retries, or which wait for room,
 *       are not taken over from a live member;</li>
 *   <li>{@link #commitSync(Map)}: {@code XACK} of the entries below the committed position — the engine commits
 *       only over batches that landed, in order — retried until Redis takes it (the rows are in ClickHouse: giving
 *       up would insert them again); the reader then trims what every group acknowledged, at most every 100 ms,
 *       and the member trims the rest when idle and on {@link #close}.</li>
 * </ul>
 * Records carry no value: the sink looks their entry up in the ledger. A Redis failure in {@link #poll} is not
 * thrown (that would abandon the batches in flight): the poll returns nothing after a backoff and the member
 * re-reads its own pending entries.
 *
 * <p><b>Single-threaded</b>, as every {@link Consumer}: the engine's poller thread.
 */
final class StreamGroupConsumer implements Consumer {
    private static final Logger LOG = LoggerFactory.getLogger(StreamGroupConsumer.class);
    /** Entry ids per XCLAIM JUSTID of the keep-alive. */
    private static final int KEEP_CHUNK = 10_000;

    /**
     * The group commands a member uses, as redis-transport's {@link GroupReader} offers them ({@link #of}); the
     * engine's unit tests put an in-memory group here.
     */
    interface Group extends AutoCloseable {
        String member();

        void open();

        List<StreamEntry> read(int maxEntries, long blockMs, long lingerMs, BooleanSupplier running);

        List<StreamEntry> readOwnPending(String after, int maxEntries);

        GroupReader.Claimed claimIdle(String cursor, long minIdleMs, int count, int maxDeliveries, DeadLetterStream deadLetters);

        void keep(Collection<String> ids);

        void acknowledge(String... ids);

        void trimAcknowledged();

        void trimAcknowledgedNow();

        @Override
        void close();

        static Group of(GroupReader reader) {
            return new Group() {
                @Override
                public String member() {
                    return reader.member();
                }

                @Override
                public void open() {
                    reader.open();
                }

                @Override
                public List<StreamEntry> read(int maxEntries, long blockMs, long lingerMs, BooleanSupplier running) {
                    return reader.read(maxEntries, blockMs, lingerMs, running);
                }

                @Override
                public List<StreamEntry> readOwnPending(String after, int maxEntries) {
                    return reader.readOwnPending(after, maxEntries);
                }

                @Override
                public GroupReader.Claimed claimIdle(String cursor, long minIdleMs, int count, int maxDeliveries,
                                                     DeadLetterStream deadLetters) {
                    return reader.claimIdle(cursor, minIdleMs, count, maxDeliveries, deadLetters);
                }

                @Override
                public void keep(Collection<String> ids) {
                    reader.keep(ids);
                }

                @Override
                public void acknowledge(String... ids) {
                    reader.acknowledge(ids);
                }

                @Override
                public void trimAcknowledged() {
                    reader.trimAcknowledged();
                }

                @Override
                public void trimAcknowledgedNow() {
                    reader.trimAcknowledgedNow();
                }

                @Override
                public void close() {
                    reader.close();
                }
            };
        }
    }

    /** What the member needs besides its connection. */
    record Settings(int batchRows, long claimIdleMs, int maxDeliveries, boolean takeover, long retryInitialMs,
                    long retryMaxMs) {
    }

    private final Group reader;
    private final EntryLedger ledger;
    private final Settings settings;
    private final DeadLetterStream deadLetterStream;
    private final IntConsumer onDeadLettered;
    private final IntConsumer onAcknowledged;
    private final BooleanSupplier givingUp;
    private final Backoff backoff;
    private boolean recovering = true; // a new member instance: its name's pending entries first
    private String ownCursor = "0";
    private String claimCursor = "0-0";
    private long nextClaimNanos = System.nanoTime();
    private long nextKeepNanos = System.nanoTime();
    private double eventsPerEntry = StreamWriter.EVENTS_PER_ENTRY;
    private boolean untrimmed; // acknowledged something: trim once more on close
    private boolean reachable = true; // the last command to Redis was answered: closing may send one more
    private boolean closed;

    /**
     * @param member         this member's name in the group, the same for every consumer of one worker of one process
     *                       (so a new one re-reads the pending entries of the one before)
     * @param onAcknowledged events of the entries acknowledged (the sink's landed count)
     * @param givingUp       true once closing gave up: an XACK that fails is then not retried
     */
    StreamGroupConsumer(RedisEndpoint endpoint, String stream, String group, String member, EntryLedger ledger, Settings settings,
                        DeadLetterStream deadLetterStream, IntConsumer onDeadLettered, IntConsumer onAcknowledged,
                        BooleanSupplier givingUp) {
        this(Group.of(new GroupReader(endpoint, stream, group, member)), ledger, settings, deadLetterStream, onDeadLettered, onAcknowledged, givingUp);
    }

    StreamGroupConsumer(Group reader, EntryLedger ledger, Settings settings, DeadLetterStream deadLetterStream,
                        IntConsumer onDeadLettered, IntConsumer onAcknowledged, BooleanSupplier givingUp) {
        this.reader = reader;
        this.ledger = ledger;
        this.settings = settings;
        this.deadLetterStream = deadLetterStream;
        this.onDeadLettered = onDeadLettered;
        this.onAcknowledged = onAcknowledged;
        this.givingUp = givingUp;
        this.backoff = new Backoff(settings.retryInitialMs(), settings.retryMaxMs());
        ledger.clear();
    }

    @Override
    public void subscribe(String topic) {
        // the member reads its one stream, whatever the engine's topic
    }

    @Override
    public Set<TopicPartition> assignment() {
        return Set.of(ledger.partition());
    }

    @Override
    public List<ConsumerRecord> poll(Duration timeout) {
        if (closed) {
            throw new io.sluice.core.SluiceException.ClosedException("consumer " + reader.member() + " is closed");
        }
        int max = EntryBatch.entriesFor(settings.batchRows(), eventsPerEntry);
        try {
            reader.open();
            long now = System.nanoTime();
            if (now - nextKeepNanos >= 0) {
                keepHeld();
                nextKeepNanos = now + settings.claimIdleMs() * 250_000L;
            }
            if (!ledger.holding() && settings.takeover() && now - nextClaimNanos >= 0) {
                claimStep(max);
            }
            if (!ledger.holding() && recovering) {
                List<StreamEntry> own = reader.readOwnPending(ownCursor, max);
                if (own.isEmpty()) {
                    recovering = false;
                } else {
                    ownCursor = own.get(own.size() - 1).id();
                    observe(own);
                    ledger.take(own, true);
                }
            }
            if (!ledger.holding() && !recovering) {
                long waitMs = Math.max(1, timeout.toMillis());
                List<StreamEntry> read = reader.read(max, waitMs, waitMs, () -> !closed);
                if (read.isEmpty()) {
                    reader.trimAcknowledged(); // idle: what the last acknowledgements (ours, other groups') left
                } else {
                    observe(read);
                    ledger.take(read, false);
                }
            }
            backoff.reset();
            reachable = true;
        } catch (GroupReader.GroupLostException e) {
            recover(); // the reader recreated the group: read again at once
        } catch (RedisStreamException e) {
            reachable = false;
            recover();
            LOG.warn("member {}: Redis unavailable ({}); retrying", reader.member(), e.toString());
            try {
                backoff.pause();
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
        }
        return ledger.handOut(max);
    }

    private void recover() {
        recovering = true;
        ownCursor = "0";
    }

    /**
     * One step of taking over idle entries (the cursor carries on at the next poll; a pass ends at {@code "0-0"}, and
     * the next starts {@code redis.claim.idle.ms / 2} later). Entries delivered too often are dead-lettered there.
     */
    private void claimStep(int max) {
        GroupReader.Claimed claimed = reader.claimIdle(claimCursor, settings.claimIdleMs(), max, settings.maxDeliveries(),
                deadLetterStream);
        claimCursor = claimed.cursor();
        if ("0-0".equals(claimCursor)) {
            nextClaimNanos = System.nanoTime() + settings.claimIdleMs() * 500_000L;
        }
        if (claimed.deadLetters() > 0) {
            untrimmed = true; // the dead-lettered entries were acknowledged
            onDeadLettered.accept(claimed.deadLetters());
        }
        if (!claimed.entries().isEmpty()) {
            int taken = ledger.take(claimed.entries(), true);
            LOG.info("member {} took over {} entries idle for >= {} ms", reader.member(), taken, settings.claimIdleMs());
        }
    }

    /** XCLAIM JUSTID of every entry held: resets their idle time, so that no other member takes them over. */
    private void keepHeld() {
        List<String> held = ledger.heldIds();
        for (int from = 0; from < held.size(); from += KEEP_CHUNK) {
            reader.keep(held.subList(from, Math.min(held.size(), from + KEEP_CHUNK)));
        }
    }

    /**
     * Entries to ask for so that a batch holds about {@code batch.rows} events: Sluice's entries pack up to
     * {@link StreamWriter#EVENTS_PER_ENTRY} events, entries from other writers may hold one; the estimate follows
     * what was read.
     */
    private void observe(List<StreamEntry> read) {
        int events = 0;
        for (StreamEntry e : read) {
            events += e.events().size();
        }
        eventsPerEntry = Math.max(1.0, (double) events / read.size());
    }

    /** Hold and retry: the records from {@code offset} on come again from the next poll (the group's position stays). */
    @Override
    public void seek(TopicPartition partition, long offset) {
        ledger.seek(offset);
    }

    /** XACK of the entries below the position, retried until Redis takes it (or closing gave up). */
    @Override
    public void commitSync(Map<TopicPartition, Long> offsets) {
        Long upTo = offsets.get(ledger.partition());
        if (upTo == null) {
            return;
        }
        EntryLedger.Acknowledgement ack = ledger.acknowledge(upTo);
        if (ack.ids().length == 0) {
            return;
        }
        Backoff retry = new Backoff(settings.retryInitialMs(), settings.retryMaxMs());
        while (true) {
            try {
                reader.open();
                reader.acknowledge(ack.ids());
                break;
            } catch (RedisStreamException e) {
                reachable = false;
                if (givingUp.getAsBoolean()) {
                    LOG.error("could not XACK {} landed entries before close; they will be inserted again", ack.ids().length);
                    return;
                }
                LOG.warn("XACK of {} landed entries failed, retrying: {}", ack.ids().length, e.toString());
                try {
                    retry.pause();
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
        untrimmed = true;
        reachable = true;
        onAcknowledged.accept(ack.events());
    }

    @Override
    public OptionalLong committed(TopicPartition partition) {
        return OptionalLong.of(ledger.floor());
    }

    @Override
    public long position(TopicPartition partition) {
        return ledger.position();
    }

    @Override
    public long skippedByRetention() {
        return 0;
    }

    @Override
    public Optional<ConsumerGroups.Membership> groupMembership() {
        return Optional.empty();
    }

    @Override
    public void assign(Set<TopicPartition> partitions) {
        throw new UnsupportedOperationException("a stream group member is given its entries by the group");
    }

    @Override
    public void seekToBeginning(Set<TopicPartition> partitions) {
        throw new UnsupportedOperationException("a stream group has no seek: it would move every member");
    }

    @Override
    public void seekToEnd(Set<TopicPartition> partitions) {
        throw new UnsupportedOperationException("a stream group has no seek: it would move every member");
    }

    @Override
    public void seekToTimestamp(TopicPartition partition, long epochMillis) {
        throw new UnsupportedOperationException("a stream group has no seek: it would move every member");
    }

    @Override
    public void commitSync() {
        throw new UnsupportedOperationException("the engine commits positions of batches that landed: commitSync(Map)");
    }

    /** Closes the connection; entries held and not acknowledged stay pending for this member's next consumer (or a takeover). */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            try {
                // the XACKs trim at most every 100 ms: the last ones may have left a tail. Not when Redis did not
                // answer last, nor once closing gave up: a command to a server that is away would hold close() up.
                if (untrimmed && reachable && !givingUp.getAsBoolean()) {
                    reader.trimAcknowledgedNow();
                }
            } catch (RedisStreamException e) {
                LOG.warn("member {}: could not trim the stream on close ({}); the next member trims it", reader.member(), e.toString());
            }
            reader.close();
        }
    }
}
