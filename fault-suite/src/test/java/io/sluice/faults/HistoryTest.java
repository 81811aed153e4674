package io.sluice.faults;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The history is read during a run (the soak and the torture run settle on the facts so far) while members still
 * append: the writer's buffer spills to the file whenever it fills, often in the middle of a line, so a reader takes
 * the lines {@link History#flushLines()} counted, each whole, and never the part of one after them.
 */
class HistoryTest {
    /** 4 writers × 10,000 lines of ~370 bytes: about 15 MB, read back 20 times while it is written. */
    private static final int LINES_PER_WRITER = 10_000;

    @TempDir
    Path dir;

    @Test
    void aReaderDuringTheRunReadsTheFlushedLinesWholeWhileWritersGoOn() throws Exception {
        String padding = "x".repeat(300); // lines of ~370 bytes: the 8 KiB buffer spills mid-line most times
        try (History history = new History(dir.resolve("history.jsonl"))) {
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                String proc = "member-" + w;
                Thread t = new Thread(() -> {
                    for (long i = 0; i < LINES_PER_WRITER && !stop.get(); i++) {
                        long id = i;
                        history.append(proc, "consume", "ok", n -> n.put("id", id).put("pad", padding));
                    }
                }, proc);
                t.start();
                writers.add(t);
            }
            try {
                for (int read = 0; read < 20; read++) {
                    long flushed = history.flushLines();
                    AtomicLong seen = new AtomicLong();
                    History.read(history.file(), flushed, op -> {
                        assertThat(op.path("pad").asText()).isEqualTo(padding);
                        seen.incrementAndGet();
                    });
                    assertThat(seen.get()).isEqualTo(flushed);
                }
            } finally {
                stop.set(true);
                for (Thread t : writers) {
                    t.join();
                }
            }
        }
    }
}
