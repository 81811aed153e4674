package io.sluice.core;

import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.core.config.ConfigDef;
import io.sluice.core.config.ConfigDef.Importance;
import io.sluice.core.config.ConfigDef.Type;
import io.sluice.core.config.Validator;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;

/**
 * The broker's settings, validated once by {@link Builder#build()}; every error names the setting and the value.
 *
 * @param dataDir                  where topics, journals and committed offsets live (created if missing)
 * @param ringSize                 slots per partition ring; a power of two in [64, 2^22]. Bounds the events in
 *                                 flight between producers and the journal writer of one partition
 * @param waitStrategy             how journal writers and subscribers wait for events
 * @param journalThreads           threads the journal writers of all partitions share (each partition is written by
 *                                 one of them, always the same)
 * @param subscriberThreads        threads the live subscribers ({@link Broker#subscribe}) of all partitions share
 * @param maxEventSize             the largest serialized event accepted (key + value + headers + 26 bytes framing)
 * @param rollCycle                journal file granularity (and so retention granularity)
 * @param retentionCheckMillis     how often the housekeeper applies topic retention
 * @param clock                    wall-clock time for timestamps, roll cycles and retention
 * @param minFreeDiskBytes         journals refuse appends (senders get a JournalException) while the disk holding
 *                                 them has less free space than this, instead of risking a SIGBUS on a memory-mapped
 *                                 write into a full disk; 0 disables the check
 * @param journalMapBytes          how much of a journal file is mapped at once (Chronicle Queue's block size): a
 *                                 read that leaves the mapped part unmaps it and maps another, a system call and
 *                                 page faults on every page it then touches. Reads by offset in a file larger than
 *                                 this pay that on most reads. Address space, not memory: the file grows sparse to
 *                                 the mapped size, and only the pages touched are resident (and reclaimable)
 * @param journalCallerAppends     a network front's {@link Acks#JOURNAL} batch that finds its partition's journal
 *                                 writer idle is journaled by the request's own thread (its event loop), which then
 *                                 answers at once: two thread hand-offs fewer per round trip. The event loop does the
 *                                 append (microseconds; longer when a journal file rolls). False: the journal threads
 *                                 write every batch
 * @param journalPretouchBytes     how far beyond each journal's last document a background thread keeps the file's
 *                                 pages in the page cache, so that appends do not fault in fresh pages on the
 *                                 writing thread ({@code io.sluice.core.internal.journal.JournalPretoucher}); 0: no
 *                                 such thread
 * @param busBatchPauseNanos       after a duty cycle in which a journal or subscriber thread handled fewer events than
 *                                 one cache line of the ring's availability flags holds (16), it pauses this long
 *                                 before polling again, so that the producers run ahead and the thread then reads
 *                                 whole cache lines of what they wrote instead of pulling each line away from them
 *                                 as it is written (smart batching; docs/benchmarks.md, issue 22 item 28). An event
 *                                 published during the pause waits up to this much longer; 0: no pause
 */
public record BrokerConfig(Path dataDir, int ringSize, WaitStrategyType waitStrategy, int journalThreads,
                           int subscriberThreads, int maxEventSize,
                           RollCycleType rollCycle, long retentionCheckMillis, EpochClock clock, long minFreeDiskBytes,
                           long journalMapBytes, boolean journalCallerAppends, long journalPretouchBytes,
                           long busBatchPauseNanos) {

    public static final int MAX_EVENT_SIZE_LIMIT = 64 << 20;

    public static final String DATA_DIR = "data.dir";
    public static final String RING_SIZE = "ring.size";
    public static final String WAIT_STRATEGY = "wait.strategy";
    public static final String JOURNAL_THREADS = "journal.threads";
    public static final String SUBSCRIBER_THREADS = "subscriber.threads";
    public static final String MAX_EVENT_SIZE = "max.event.size";
    public static final String ROLL_CYCLE = "roll.cycle";
    public static final String RETENTION_CHECK_MS = "retention.check.ms";
    public static final String MIN_FREE_DISK_BYTES = "min.free.disk.bytes";
    public static final String JOURNAL_MAP_BYTES = "journal.map.bytes";
    public static final String JOURNAL_CALLER_APPENDS = "journal.caller.appends";
    public static final String JOURNAL_PRETOUCH_BYTES = "journal.pretouch.bytes";
    public static final String BUS_BATCH_PAUSE_NS = "bus.batch.pause.ns";

    /** The broker's settings as a properties file names them; the builder's defaults come from here. */
    public static final ConfigDef DEFINITION = new ConfigDef()
            .define(DATA_DIR, Type.STRING, "./data", Validator.nonBlank(), Importance.HIGH,
                    "topics (`topics/<name>/<partition>/*.cq4`) and committed offsets (`groups/`); created if missing")
            .define(RING_SIZE, Type.INT, 16_384, Validator.powerOfTwo(64, 1 << 22), Importance.MEDIUM,
                    "slots per partition ring: bounds the events in flight between producers and the partition's journal writer")
            .define(WAIT_STRATEGY, Type.STRING, "sleeping", Validator.oneOf(WaitStrategyType.class), Importance.LOW,
                    "how journal writers and subscribers wait for events (Disruptor wait strategies)")
            .define(JOURNAL_THREADS, Type.INT, 2, Validator.between(1, 256), Importance.MEDIUM,
                    "threads shared by the journal writers of all partitions (a partition always uses the same one)")
            .define(SUBSCRIBER_THREADS, Type.INT, 2, Validator.between(0, 256), Importance.LOW,
                    "threads shared by the live subscribers of all partitions; a subscriber that blocks holds up "
                            + "the others on its thread. 0: subscribers run on the journal threads, a journaled "
                            + "partition's right after its journal writer (no hand-off; a blocking subscriber then holds "
                            + "up that thread's journal writers too)")
            .define(MAX_EVENT_SIZE, Type.INT, 1 << 20, Validator.between(64, MAX_EVENT_SIZE_LIMIT), Importance.MEDIUM,
                    "largest serialized event in bytes (key + value + headers + 26 bytes framing)")
            .define(ROLL_CYCLE, Type.STRING, "hourly", Validator.oneOf(RollCycleType.class), Importance.LOW,
                    "journal file granularity, and so retention granularity")
            .define(RETENTION_CHECK_MS, Type.LONG, 60_000L, Validator.atLeast(1), Importance.LOW,
                    "how often topic retention runs")
            .define(MIN_FREE_DISK_BYTES, Type.LONG, 64L << 20, Validator.atLeast(0), Importance.MEDIUM,
                    "below this much free disk, appends fail with a JournalException (nothing acknowledged is lost; "
                            + "writes resume when space returns) instead of risking a SIGBUS on a memory-mapped write; 0 disables")
            .define(JOURNAL_MAP_BYTES, Type.LONG, 1L << 30, Validator.between(16L << 20, 1L << 30), Importance.LOW,
                    "bytes of a journal file mapped at once (Chronicle Queue's block size): a read outside them remaps, "
                            + "paying page faults; address space, not memory (files grow sparse to it, touched pages only are resident)")
            .define(JOURNAL_CALLER_APPENDS, Type.BOOLEAN, true, Importance.LOW,
                    "a network front's acks=journal batch that finds its partition's journal writer idle is written by "
                            + "the request's event loop, which answers at once (two thread hand-offs fewer per round trip; "
                            + "the loop does the append, microseconds, longer when a file rolls); false: always the journal threads")
            .define(JOURNAL_PRETOUCH_BYTES, Type.LONG, 4L << 20, Validator.zeroOrBetween(64L << 10, 1L << 30), Importance.LOW,
                    "bytes beyond each journal's end that a background thread (sluice-pretouch) reads into the page "
                            + "cache ahead of the writer, so that an append does not fault in and zero fresh pages on the "
                            + "writing thread; clean, reclaimable pages; 0: no such thread")
            .define(BUS_BATCH_PAUSE_NS, Type.LONG, 1_000L, Validator.between(0L, 1_000_000L), Importance.LOW,
                    "after a duty cycle that handled fewer than 16 events, a journal or subscriber thread pauses this "
                            + "many nanoseconds before polling again, so that producers run ahead and it reads whole cache "
                            + "lines of what they wrote (smart batching); "
                            + "an event published during the pause waits up to this much longer; 0: no pause");

    public static final int DEFAULT_RING_SIZE = DEFINITION.defaultInt(RING_SIZE);
    public static final int DEFAULT_MAX_EVENT_SIZE = DEFINITION.defaultInt(MAX_EVENT_SIZE);
    public static final long DEFAULT_MIN_FREE_DISK_BYTES = DEFINITION.defaultLong(MIN_FREE_DISK_BYTES);
    public static final long DEFAULT_JOURNAL_MAP_BYTES = DEFINITION.defaultLong(JOURNAL_MAP_BYTES);
    public static final long DEFAULT_JOURNAL_PRETOUCH_BYTES = DEFINITION.defaultLong(JOURNAL_PRETOUCH_BYTES);
    public static final long DEFAULT_BUS_BATCH_PAUSE_NANOS = DEFINITION.defaultLong(BUS_BATCH_PAUSE_NS);

    public BrokerConfig {
        Objects.requireNonNull(dataDir, "dataDir");
        Objects.requireNonNull(waitStrategy, "waitStrategy");
        Objects.requireNonNull(rollCycle, "rollCycle");
        Objects.requireNonNull(clock, "clock");
        DEFINITION.check(RING_SIZE, "ringSize", ringSize);
        DEFINITION.check(JOURNAL_THREADS, "journalThreads", journalThreads);
        DEFINITION.check(SUBSCRIBER_THREADS, "subscriberThreads", subscriberThreads);
        DEFINITION.check(MAX_EVENT_SIZE, "maxEventSize", maxEventSize);
        DEFINITION.check(MIN_FREE_DISK_BYTES, "minFreeDiskBytes", minFreeDiskBytes);
        DEFINITION.check(RETENTION_CHECK_MS, "retentionCheckMillis", retentionCheckMillis);
        DEFINITION.check(JOURNAL_MAP_BYTES, "journalMapBytes", journalMapBytes);
        DEFINITION.check(JOURNAL_PRETOUCH_BYTES, "journalPretouchBytes", journalPretouchBytes);
        DEFINITION.check(BUS_BATCH_PAUSE_NS, "busBatchPauseNanos", busBatchPauseNanos);
    }

    public static Builder builder(Path dataDir) {
        return new Builder(dataDir);
    }

    /** A builder holding {@code settings} (parsed by {@link #DEFINITION}); the clock stays the system clock. */
    public static Builder builder(ConfigDef.Values settings) {
        return new Builder(Path.of(settings.getString(DATA_DIR)))
                .ringSize(settings.getInt(RING_SIZE))
                .waitStrategy(WaitStrategyType.valueOf(settings.getString(WAIT_STRATEGY).toUpperCase(Locale.ROOT)))
                .journalThreads(settings.getInt(JOURNAL_THREADS))
                .subscriberThreads(settings.getInt(SUBSCRIBER_THREADS))
                .maxEventSize(settings.getInt(MAX_EVENT_SIZE))
                .rollCycle(RollCycleType.valueOf(settings.getString(ROLL_CYCLE).toUpperCase(Locale.ROOT)))
                .retentionCheckMillis(settings.getLong(RETENTION_CHECK_MS))
                .minFreeDiskBytes(settings.getLong(MIN_FREE_DISK_BYTES))
                .journalMapBytes(settings.getLong(JOURNAL_MAP_BYTES))
                .journalCallerAppends(settings.getBoolean(JOURNAL_CALLER_APPENDS))
                .journalPretouchBytes(settings.getLong(JOURNAL_PRETOUCH_BYTES))
                .busBatchPauseNanos(settings.getLong(BUS_BATCH_PAUSE_NS));
    }

    public static final class Builder {
        private final Path dataDir;
        private int ringSize = DEFAULT_RING_SIZE;
        private WaitStrategyType waitStrategy = WaitStrategyType.valueOf(DEFINITION.defaultString(WAIT_STRATEGY).toUpperCase(Locale.ROOT));
        private int journalThreads = DEFINITION.defaultInt(JOURNAL_THREADS);
        private int subscriberThreads = DEFINITION.defaultInt(SUBSCRIBER_THREADS);
        private int maxEventSize = DEFAULT_MAX_EVENT_SIZE;
        private RollCycleType rollCycle = RollCycleType.valueOf(DEFINITION.defaultString(ROLL_CYCLE).toUpperCase(Locale.ROOT));
        private long retentionCheckMillis = DEFINITION.defaultLong(RETENTION_CHECK_MS);
        private EpochClock clock = EpochClock.SYSTEM;
        private long minFreeDiskBytes = DEFAULT_MIN_FREE_DISK_BYTES;
        private long journalMapBytes = DEFAULT_JOURNAL_MAP_BYTES;
        private boolean journalCallerAppends = (Boolean) DEFINITION.defaultValue(JOURNAL_CALLER_APPENDS);
        private long journalPretouchBytes = DEFAULT_JOURNAL_PRETOUCH_BYTES;
        private long busBatchPauseNanos = DEFAULT_BUS_BATCH_PAUSE_NANOS;

        private Builder(Path dataDir) {
            this.dataDir = dataDir;
        }

        public Builder ringSize(int v) { this.ringSize = v; return this; }
        public Builder waitStrategy(WaitStrategyType v) { this.waitStrategy = v; return this; }
        public Builder journalThreads(int v) { this.journalThreads = v; return this; }
        public Builder subscriberThreads(int v) { this.subscriberThreads = v; return this; }
        public Builder maxEventSize(int v) { this.maxEventSize = v; return this; }
        public Builder rollCycle(RollCycleType v) { this.rollCycle = v; return this; }
        public Builder retentionCheckMillis(long v) { this.retentionCheckMillis = v; return this; }
        public Builder clock(EpochClock v) { this.clock = v; return this; }
        public Builder minFreeDiskBytes(long v) { this.minFreeDiskBytes = v; return this; }
        public Builder journalMapBytes(long v) { this.journalMapBytes = v; return this; }
        public Builder journalCallerAppends(boolean v) { this.journalCallerAppends = v; return this; }
        public Builder journalPretouchBytes(long v) { this.journalPretouchBytes = v; return this; }
        public Builder busBatchPauseNanos(long v) { this.busBatchPauseNanos = v; return this; }

        public BrokerConfig build() {
            if (dataDir == null) {
                throw InvalidConfigException.of("dataDir", null, "must be set");
            }
            return new BrokerConfig(dataDir, ringSize, waitStrategy, journalThreads, subscriberThreads, maxEventSize,
                    rollCycle, retentionCheckMillis, clock, minFreeDiskBytes, journalMapBytes, journalCallerAppends,
                    journalPretouchBytes, busBatchPauseNanos);
        }
    }
}
