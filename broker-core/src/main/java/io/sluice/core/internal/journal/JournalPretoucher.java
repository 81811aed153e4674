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
 * <p><b>Bounded.</b> One thread, one {@value #CHUNK}-byte buffer, one open channel per journal that has written
 * (closed when the writer moves to the next cycle file or the journal closes), at most {@code aheadBytes} of page
 * cache ahead of each journal's end, at most {@value #CHUNKS_PER_TURN} reads per journal per pass so that one busy
 * journal does not hold up the others. Idle, it parks {@value #IDLE_MICROS} µs between passes, and
 * {@value #SLEEP_MICROS} µs once nothing was written for {@value #SLEEP_AFTER_MILLIS} ms (the pages it touched
 * ahead cover the start of the next burst).
 */
public final class JournalPretoucher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JournalPretoucher.class);
    static final int CHUNK = 64 << 10;
    static final int CHUNKS_PER_TURN = 16;
    static final long IDLE_MICROS = 1_000;
    static final long SLEEP_MICROS = 10_000;
    static final long SLEEP_AFTER_MILLIS = 100;

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
        long lastWork = System.nanoTime();
        try {
            while (running) {
                boolean worked = false;
                for (Target t : targets) {
                    worked |= touch(t);
                }
                passes.incrementAndGet();
                long now = System.nanoTime();
                if (worked) {
                    lastWork = now;
                } else {
                    boolean recent = now - lastWork < TimeUnit.MILLISECONDS.toNanos(SLEEP_AFTER_MILLIS);
                    LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(recent ? IDLE_MICROS : SLEEP_MICROS));
                }
            }
        } finally {
            for (Target t : targets) {
                t.release();
            }
            targets.clear();
        }
    }

    /** One turn for one journal; true if it read anything or dropped the journal. */
    private boolean touch(Target t) {
        if (t.closed) {
            t.release();
            targets.remove(t);
            return true;
        }
        long end = t.end(); // acquire first: a file published before it is visible with it
        Path file = t.file;
        if (file == null) {
            return false;
        }
        if (file != t.current) {
            t.release();
            t.current = file;
            t.touched = end;
            try {
                t.channel = FileChannel.open(file, StandardOpenOption.READ);
                t.openFile = file;
            } catch (IOException | RuntimeException e) {
                LOG.debug("pretouch of {} cannot open {}: {}", t.name, file, e.toString()); // gone: wait for the next file
                return false;
            }
        }
        if (t.channel == null) {
            return false;
        }
        long from = Math.max(t.touched, end);
        long to = end + aheadBytes;
        if (from >= to) {
            return false;
        }
        try {
            to = Math.min(to, t.channel.size()); // Chronicle extends the file (sparse) ahead of the writer
            int chunks = 0;
            while (from < to && chunks++ < CHUNKS_PER_TURN) {
                buffer.clear().limit((int) Math.min(CHUNK, to - from));
                int n = t.channel.read(buffer, from);
                if (n <= 0) {
                    break;
                }
                from += n;
                touchedBytes.addAndGet(n);
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("pretouch of {} failed on {}: {}", t.name, file, e.toString()); // skip this file from now on
            t.release();
            return false;
        }
        boolean moved = from > t.touched;
        t.touched = from;
        return moved;
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
