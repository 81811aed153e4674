package io.sluice.faults;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * The append-only record of a run: one JSON object per line in {@code history.jsonl}, each with {@code t} (ms since
 * the start of the run), {@code proc} (who: {@code producer-0}, {@code member-1}, {@code nemesis}, ...), {@code f}
 * (what: send, consume, commit, fault, ...), {@code type} ({@code ok}, {@code fail}, {@code info}, {@code start},
 * {@code end}) and the operation's fields. The {@link Checker} reads it back; nothing else is kept.
 *
 * <p>Thread-safety: {@link #append} is called by producer callbacks, members and the nemesis; a lock serialises
 * the writes (a harness, not a hot path: at most a few thousand lines a second). Operations of one process are in
 * the order that process observed them.
 */
public final class History implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path file;
    private final BufferedWriter out;
    private final long startNanos = System.nanoTime();
    private long lines;

    public History(Path file) {
        this.file = file;
        try {
            Files.createDirectories(file.getParent());
            this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write history " + file, e);
        }
    }

    public Path file() {
        return file;
    }

    /** Appends one operation; {@code fields} fills in its own fields. */
    public void append(String proc, String f, String type, Consumer<ObjectNode> fields) {
        ObjectNode n = JSON.createObjectNode();
        n.put("t", (System.nanoTime() - startNanos) / 1_000_000);
        n.put("proc", proc);
        n.put("f", f);
        n.put("type", type);
        if (fields != null) {
            fields.accept(n);
        }
        String line = n.toString();
        synchronized (this) {
            try {
                out.write(line);
                out.write('\n');
                lines++;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot append to " + file, e);
            }
        }
    }

    public synchronized long lines() {
        return lines;
    }

    /**
     * Flushes what was appended and returns how many lines that is: all of them whole, while writers that go on
     * appending may already have put part of their next line in the file (the writer's buffer spills when full), so a
     * reader during the run stops there ({@link #read(Path, long, Consumer)}).
     */
    public synchronized long flushLines() {
        flush();
        return lines;
    }

    /** Flushes what was appended, so a reader of the file sees it. */
    public synchronized void flush() {
        try {
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads a history file back, line by line. */
    public static void read(Path file, Consumer<com.fasterxml.jackson.databind.JsonNode> op) {
        read(file, Long.MAX_VALUE, op);
    }

    /** Reads the first {@code maxLines} lines of a history file back ({@link #flushLines()} during a run). */
    public static void read(Path file, long maxLines, Consumer<com.fasterxml.jackson.databind.JsonNode> op) {
        try (var lines = Files.lines(file, StandardCharsets.UTF_8)) {
            lines.limit(maxLines).forEach(l -> {
                if (!l.isBlank()) {
                    try {
                        op.accept(JSON.readTree(l));
                    } catch (IOException e) {
                        throw new UncheckedIOException("bad history line in " + file + ": " + l, e);
                    }
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    @Override
    public synchronized void close() {
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
