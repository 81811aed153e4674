package io.sluice.kafka.internal;

import io.sluice.core.SluiceException;
import org.apache.kafka.common.Uuid;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The Kafka cluster id of a data directory: made once (a random {@link Uuid}, Kafka's 22-character base64 form) and
 * kept in {@code <data.dir>/kafka/cluster.id}, so clients that cache it (the Java client compares it across
 * reconnects) see the same cluster after a restart, and two brokers on two data directories are told apart.
 */
final class ClusterIdentity {
    static final String FILE = "cluster.id";

    private ClusterIdentity() {
    }

    static String loadOrCreate(Path kafkaDir) {
        Path file = kafkaDir.resolve(FILE);
        try {
            if (Files.exists(file)) {
                String id = Files.readString(file, StandardCharsets.US_ASCII).strip();
                Uuid.fromString(id); // refuses a damaged file rather than announcing garbage
                return id;
            }
            Files.createDirectories(kafkaDir);
            String id = Uuid.randomUuid().toString();
            Path tmp = kafkaDir.resolve(FILE + ".tmp");
            Files.writeString(tmp, id + "\n", StandardCharsets.US_ASCII);
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
            return id;
        } catch (IOException | IllegalArgumentException e) {
            throw new SluiceException(SluiceException.Code.INVALID_CONFIG, "cannot read or create the Kafka cluster id in "
                    + file + ": " + e.getMessage(), e);
        }
    }
}
