package io.sluice.core.internal.group;

import io.sluice.core.TopicPartition;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads the partitions out of a Kafka consumer's assignment bytes (the "consumer" protocol type's
 * {@code ConsumerProtocolAssignment}, versions 0 to 3, which share this prefix), so that Sluice's describe and lag
 * views show who owns what. Plain Java: broker-core keeps no Kafka classes.
 *
 * <pre>
 * int16  version
 * int32  topic count          (-1: null)
 *   int16  topic name length, UTF-8 bytes
 *   int32  partition count    (-1: null)
 *     int32  partition
 * ...    user data (ignored)
 * </pre>
 */
final class ConsumerProtocolAssignment {
    private ConsumerProtocolAssignment() {
    }

    /** The assigned partitions, or an empty set when the bytes are empty or do not decode. */
    static Set<TopicPartition> partitions(byte[] assignment) {
        Set<TopicPartition> out = new TreeSet<>();
        if (assignment == null || assignment.length < 2) {
            return out;
        }
        try {
            ByteBuffer b = ByteBuffer.wrap(assignment);
            short version = b.getShort();
            if (version < 0) {
                return Set.of();
            }
            int topics = b.getInt();
            for (int t = 0; t < topics; t++) {
                int len = b.getShort();
                if (len < 0 || len > b.remaining()) {
                    return Set.of();
                }
                byte[] name = new byte[len];
                b.get(name);
                String topic = new String(name, StandardCharsets.UTF_8);
                int partitions = b.getInt();
                if (partitions > b.remaining() / 4) {
                    return Set.of();
                }
                for (int p = 0; p < partitions; p++) {
                    out.add(new TopicPartition(topic, b.getInt()));
                }
            }
            return out;
        } catch (BufferUnderflowException | IllegalArgumentException malformed) {
            return Set.of();
        }
    }
}
