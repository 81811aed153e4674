package io.sluice.core.internal.journal;

import io.sluice.core.internal.NamedThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Brings the pages a journal writer will append to next into the page cache before it gets there, on a thread of
 * its own ({@code journal.pretouch.bytes}; the job Chronicle Queue's enterprise pretoucher and Aeron's pre-touched
 * term buffers do).
 *
 * <p><b>Why.</b> A cycle file grows sparse: the first write through the mapping to each 4 KiB page faults, and the
 * kernel allocates and zero-fills a page-cache page on the writing thread. That is about 1 µs per page on a warm
 * machine and 6–10 µs on a VM whose host backs guest memory lazily and takes freed pages back (measured here:
 * docs/benchmarks.md item 22), paid by whichever thread appends: a journal thread, or an event loop journaling its
 * own request. A profile of Kafka's ProducerPerformance against the Kafka listener put 36% of the broker's samples
 * in that fault ({@code filemap_fault → ext4_mpage_readpages → zero_user_segments}).
 *
 * <p><b>How.</b> Each journal's writer publishes its cycle file and the end of its last document
 * ({@link Target#appended}: two ordered stores per document, no wake-up). This thread keeps, for each journal, the
 * bytes from that end up to {@code aheadBytes} beyond it read once with {@code pread} into one reused buffer: a read
 * of a hole allocates the zeroed page-cache page, the same page the writer's mapping then only maps (a minor fault).
 * It only reads, so it never races the writer over the file's content; pages it brings in are clean and
 * reclaimable. A journal that stops writing costs nothing more once its {@code aheadBytes} are touched.
 *
 * <p><b>Few calls.</b> A writer that uses a {@value #CHUNK}-byte chunk in less than {@value #IDLE_PARK_MICROS} µs (at
 * the rate it wrote since the previous pass) is followed closely: each pass reads what is missing of its lead, and
 * one that read runs the next at once. A slower writer's journal is read once a whole chunk is missing from its lead,
 * never a few KiB after each document, and the thread then parks for the time that writer needs to use up the chunk
 * it left, at least {@value #IDLE_PARK_MICROS} µs and at most {@value #MAX_PARK_MICROS} µs, the most once a journal
 * wrote nothing for {@value #SLEEP_AFTER_MILLIS} ms (the pages it touched ahead cover the start of the next burst). A
 * journal written at 3 MB/s costs about 50 reads a second and about 100 wake-ups.
 *
 * <p><b>Bounded.</b> One thread, one {@value #CHUNK}-byte buffer, one open channel per journal that has written
 * (closed when the writer moves to the next cycle file or the journal closes), at most {@code aheadBytes} of page
 * cache ahead of each journal's end, at most {@value #CHUNKS_PER_TURN} reads per journal per pass so that one busy
 * journal does not hold up the others (a journal left behind by that cap gets the next pass at once).
 */
public final class JournalPretoucher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JournalPretoucher.class);
    /** The unit of reading ahead: a read happens once this much of a journal's lead is missing. */
    public static final int CHUNK = 64 << 10;
    static final int CHUNKS_PER_TURN = 16;
    static final long IDLE_PARK_MICROS = 1_000;
    static final long MAX_PARK_MICROS = 10_000;
    static final long SLEEP_AFTER_MILLIS = 100;
    private static final long SLEEP_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(SLEEP_AFTER_MILLIS);
    private static final long IDLE_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(IDLE_PARK_MICROS);
    private static final long MAX_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(MAX_PARK_MICROS);

    private final long aheadBytes;
    private final CopyOnWriteArrayList<Target> targets = new CopyOnWriteArrayList<>();
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(CHUNK);
    private final AtomicLong touchedBytes = new AtomicLong();
    private final AtomicLong passes = new AtomicLong();
    private final Thread thread;
    private volatile boolean running = true;

    /**
     * @param aheadBytes how far beyond each journal's last document to keep its file's pages in the page cache
     * @param threadName the thread's name
     */
    public JournalPretoucher(long aheadBytes, String threadName) {
        if (aheadBytes < CHUNK) {
            throw new IllegalArgumentException("aheadBytes " + aheadBytes + " < " + CHUNK);
        }
        this.aheadBytes = aheadBytes;
        this.thread = new NamedThreadFactory(threadName).newThread(this::run);
        thread.start();
    }

    /** A new journal's handle; its writer calls {@link Target#appended}, its owner {@link Target#close}. */
    public Target register(String name) {
        Target t = new Target(name);
        targets.add(t);
        return t;
    }

    /** Bytes read ahead of writers since start (page-cache pages brought in, or found there). */
    public long touchedBytes() {
        return touchedBytes.get();
    }

    /** Passes over every journal so far (a test waits for some to see that nothing more is read). */
    public long passes() {
        return passes.get();
    }

    /** Stops the thread and closes every channel it holds; waits up to 5 s. */
    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        try {
            while (running) {
                long now = System.nanoTime();
                long park = MAX_PARK_NANOS;
                for (Target t : targets) {
                    park = Math.min(park, touch(t, now));
                }
                passes.incrementAndGet();
                if (park > 0) {
                    LockSupport.parkNanos(park);
                }
            }
        } finally {
            for (Target t : targets) {
                t.release();
            }
            targets.clear();
        }
    }

    /**
     * One turn for one journal: reads what is missing of its lead once a whole chunk is, and returns how long this
     * journal can wait for the next pass (0: at once, the turn's cap left reads to do).
     */
    private long touch(Target t, long now) {
        if (t.closed) {
            t.release();
            targets.remove(t);
            return 0;
        }
        long end = t.end(); // acquire first: a file published before it is visible with it
        Path file = t.file;
        if (file == null) {
            return MAX_PARK_NANOS;
        }
        if (end != t.lastEnd) {
            t.lastEnd = end;
            t.movedAt = now;
        }
        if (now - t.windowAt >= IDLE_PARK_NANOS) { // the writer's rate over windows of at least the idle park
            t.wrote = end - t.windowEnd;
            t.elapsed = now - t.windowAt;
            t.windowEnd = end;
            t.windowAt = now;
        }
        if (file != t.current) {
            t.release();
            t.current = file;
            t.touched = end;
            t.wrote = 0;
            t.windowEnd = end;
            t.windowAt = now;
            try {
                t.channel = FileChannel.open(file, StandardOpenOption.READ);
                t.openFile = file;
            } catch (IOException | RuntimeException e) {
                LOG.debug("pretouch of {} cannot open {}: {}", t.name, file, e.toString()); // gone: wait for the next file
                return MAX_PARK_NANOS;
            }
        }
        if (t.channel == null) {
            return MAX_PARK_NANOS;
        }
        // a writer that uses a chunk within the idle park is followed closely (whatever is missing is read, and the next
        // pass runs at once after a read); a slower one waits for a whole chunk to be missing, and the park is sized
        long wrote = t.wrote;
        long elapsed = t.elapsed;
        boolean fast = wrote > 0 && (double) CHUNK * elapsed < (double) wrote * IDLE_PARK_NANOS;
        long from = Math.max(t.touched, end);
        long to = end + aheadBytes;
        boolean read = false;
        if (to - from >= (fast ? 1 : CHUNK)) {
            try {
                to = Math.min(to, t.channel.size()); // Chronicle extends the file (sparse) ahead of the writer
                int chunks = 0;
                while (from < to) {
                    if (chunks++ == CHUNKS_PER_TURN) {
                        t.touched = from;
                        return 0;
                    }
                    buffer.clear().limit((int) Math.min(CHUNK, to - from));
                    int n = t.channel.read(buffer, from);
                    if (n <= 0) {
                        break;
                    }
                    from += n;
                    read = true;
                    touchedBytes.addAndGet(n);
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("pretouch of {} failed on {}: {}", t.name, file, e.toString()); // skip this file from now on
                t.release();
                return MAX_PARK_NANOS;
            }
            t.touched = from;
        }
        // what the writer can append before a whole chunk is missing again
        long slack = t.touched - end - (aheadBytes - CHUNK);
        if (read && (fast || slack <= 0)) {
            return 0; // following a fast writer, or still behind: the next pass at once
        }
        if (now - t.movedAt >= SLEEP_AFTER_NANOS) {
            return MAX_PARK_NANOS; // a journal that stopped writing
        }
        if (fast || slack <= 0 || wrote <= 0) {
            return IDLE_PARK_NANOS; // nothing to read yet (or the file ends first)
        }
        return Math.min(MAX_PARK_NANOS, Math.max(IDLE_PARK_NANOS, (long) ((double) slack * elapsed / wrote)));
    }

    /** One journal as the pretoucher sees it. */
    public static final class Target {
        private static final VarHandle END;

        static {
            try {
                END = MethodHandles.lookup().findVarHandle(Target.class, "end", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final String name;
        private volatile Path file;
        private long end; // END: set with release, read with acquire
        private volatile boolean closed;
        // pretoucher thread only
        /** the file the state below refers to */
        private Path current;
        private volatile Path openFile;
        private FileChannel channel;
        /** where the pages read ahead end (written by the pretoucher thread only) */
        private volatile long touched;
        /** the end a pass last saw, and when it last moved */
        private long lastEnd;
        private long movedAt;
        /** the writer's rate: {@code wrote} bytes in {@code elapsed} ns, over a window that started at windowEnd, windowAt */
        private long windowEnd;
        private long windowAt;
        private long wrote;
        private long elapsed;

        private Target(String name) {
            this.name = name;
        }

        /** Journal writer: its last document ends at {@code end} in {@code file} (the same Path object while it writes that file). */
        public void appended(Path file, long end) {
            if (file != this.file) {
                this.file = file;
            }
            END.setRelease(this, end); // ordered after the file: a store, no fence, on the writer's path
        }

        /** The end of the last document the writer published. */
        public long end() {
            return (long) END.getAcquire(this);
        }

        /** Where the pages the pretoucher read end: at most {@code end() + aheadBytes} (the file may end first). */
        public long touchedTo() {
            return touched;
        }

        /** The cycle file the pretoucher holds open for this journal, or null. */
        public Path openFile() {
            return openFile;
        }

        /** The journal closed: the pretoucher lets go of its file. */
        public void close() {
            closed = true;
        }

        private void release() {
            FileChannel c = channel;
            channel = null;
            openFile = null;
            if (c != null) {
                try {
                    c.close();
                } catch (IOException e) {
                    LOG.debug("closing {} failed: {}", name, e.toString());
                }
            }
        }
    }
}
