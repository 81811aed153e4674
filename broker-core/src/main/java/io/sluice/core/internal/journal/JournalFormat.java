package io.sluice.core.internal.journal;

import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * The format version of a partition's journal directory, in the file {@value #FILE} ({@code format=2}).
 *
 * <ul>
 *   <li>format 1 (no {@value #FILE}, cycle files present): one Chronicle document per event, little-endian
 *       offset/timestamp/key/headers/value. Refused: this broker cannot read it.</li>
 *   <li>format 2: one Chronicle document per record batch, Kafka RecordBatch v2 (docs/journal-format.md).</li>
 * </ul>
 *
 * A new (empty) directory gets the current version, written durably before the first cycle file exists.
 */
public final class JournalFormat {
    public static final String FILE = "journal.format";
    public static final int CURRENT = 2;
    /** The per-event format of Sluice before record batches; its directories carry no {@value #FILE}. */
    public static final int PER_EVENT = 1;

    private JournalFormat() {
    }

    /**
     * Writes the current version into an empty directory, or checks the version of an existing one.
     *
     * @throws SluiceException.JournalException naming both versions if the directory holds another format
     */
    static void checkOrCreate(TopicPartition partition, Path dir) {
        Path file = dir.resolve(FILE);
        try {
            if (Files.exists(file)) {
                int version = parse(partition, file);
                if (version != CURRENT) {
                    throw refused(partition, dir, version);
                }
                return;
            }
            if (hasCycleFiles(dir)) {
                throw refused(partition, dir, PER_EVENT);
            }
            DurableFiles.replace(file, ("format=" + CURRENT + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new SluiceException.JournalException(partition + ": cannot read or write " + file + ": " + e, e);
        }
    }

    private static SluiceException.JournalException refused(TopicPartition partition, Path dir, int found) {
        return new SluiceException.JournalException(partition + ": " + dir + " holds journal format " + found
                + (found == PER_EVENT ? " (one document per event)" : "") + "; this broker reads and writes format "
                + CURRENT + " (record batches) only. Consume the data with the Sluice version that wrote it, or move "
                + "the directory away to start the partition empty.", null);
    }

    private static int parse(TopicPartition partition, Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8).trim();
        if (text.startsWith("format=")) {
            try {
                return Integer.parseInt(text.substring("format=".length()).trim());
            } catch (NumberFormatException e) {
                // reported below
            }
        }
        throw new SluiceException.JournalException(partition + ": " + file + " does not name a journal format: '"
                + text + "'", null);
    }

    private static boolean hasCycleFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.anyMatch(f -> f.getFileName().toString().endsWith(".cq4"));
        }
    }
}
