package io.sluice.bench.baseline;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.wire.DocumentContext;

import java.nio.file.Path;

/**
 * The raw baseline for the journal: one plain Chronicle Queue per partition, each excerpt holding exactly the
 * event's value bytes — no offset, timestamp, key or header framing, no index of its own. Appenders and tailers are
 * single-threaded: each caller creates its own. Chronicle's index is as dense as Sluice's journal keeps it (every 4th
 * excerpt, capacity per cycle unchanged: {@code FAST_HOURLY}'s 4,096 entries × every 256th becomes 32,768 × every 4th), so a read by index
 * walks as few headers on both sides, and files are mapped in chunks of the broker's default {@code journal.map.bytes}, so
 * a random read remaps as rarely on both sides.
 */
public final class RawJournal implements AutoCloseable {
    private final ChronicleQueue[] queues;

    public RawJournal(Path dir, int partitions) {
        queues = new ChronicleQueue[partitions];
        for (int p = 0; p < partitions; p++) {
            queues[p] = ChronicleQueue.singleBuilder(dir.resolve("p" + p)).rollCycle(RollCycles.FAST_HOURLY)
                    .indexSpacing(4).indexCount(32_768)
                    .blockSize(io.sluice.core.BrokerConfig.DEFAULT_JOURNAL_MAP_BYTES).build();
        }
    }

    public int partitions() {
        return queues.length;
    }

    public ExcerptAppender appender(int partition) {
        return queues[partition].createAppender();
    }

    public ExcerptTailer tailer(int partition) {
        return queues[partition].createTailer();
    }

    /** Appends one excerpt of {@code length} bytes; returns its Chronicle index. */
    public static long append(ExcerptAppender appender, byte[] value, int length) {
        try (DocumentContext dc = appender.writingDocument()) {
            dc.wire().bytes().write(value, 0, length);
            return dc.index();
        }
    }

    /** Reads the next excerpt into {@code into}; returns its length, or -1 at the end. */
    public static int read(ExcerptTailer tailer, byte[] into) {
        try (DocumentContext dc = tailer.readingDocument()) {
            if (!dc.isPresent()) {
                return -1;
            }
            Bytes<?> b = dc.wire().bytes();
            int len = (int) Math.min(b.readRemaining(), into.length);
            b.read(into, 0, len);
            return len;
        }
    }

    @Override
    public void close() {
        for (ChronicleQueue q : queues) {
            q.close();
        }
    }
}
