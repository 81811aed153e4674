package io.sluice.kafka.internal;

import io.sluice.core.SluiceException;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Hands out Kafka producer ids, never the same one twice for a data directory, across restarts and crashes: ids are
 * reserved in blocks of {@link #BLOCK} by writing (and syncing) the end of the block to {@code
 * <data.dir>/kafka/producer-ids} before any id of it is given out, as Kafka's controller allocates blocks. A crash
 * wastes at most the rest of one block. Thread-safe (synchronized: called once per producer start, not per record).
 */
final class ProducerIds {
    static final String FILE = "producer-ids";
    static final long BLOCK = 1000;

    private final Path file;
    private long next;
    private long reservedUntil;

    ProducerIds(Path kafkaDir) {
        this.file = kafkaDir.resolve(FILE);
        try {
            Files.createDirectories(kafkaDir);
            if (Files.exists(file)) {
                next = Long.parseLong(Files.readString(file, StandardCharsets.US_ASCII).strip());
            }
        } catch (IOException | NumberFormatException e) {
            throw new SluiceException(SluiceException.Code.INVALID_CONFIG, "cannot read the producer-id block in " + file
                    + ": " + e.getMessage(), e);
        }
        reservedUntil = next;
    }

    synchronized long next() {
        if (next == reservedUntil) {
            reserve(next + BLOCK);
        }
        return next++;
    }

    private void reserve(long until) {
        // write aside, sync, then rename over: a crash leaves the old block end or the new one, never a torn file
        Path tmp = file.resolveSibling(FILE + ".tmp");
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(java.nio.ByteBuffer.wrap((until + "\n").getBytes(StandardCharsets.US_ASCII)));
                ch.force(true);
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new SluiceException(SluiceException.Code.JOURNAL_FAILURE, "cannot reserve producer ids in " + file
                    + ": " + e.getMessage(), e);
        }
        reservedUntil = until;
    }
}
