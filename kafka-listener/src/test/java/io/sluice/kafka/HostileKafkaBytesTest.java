package io.sluice.kafka;

import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.MetadataResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bytes no client would send: every frame gets a Kafka answer or closes its connection, nothing is stored, and the
 * listener keeps serving. Seeded, so a failure replays; bounded (a few hundred frames).
 */
class HostileKafkaBytesTest {
    static final long SEED = 0x51_1CE_2026L;

    @TempDir
    Path dir;

    @Test
    void fuzzedHeadersAndBodiesAreAnsweredOrCloseTheConnectionAndStoreNothing() throws Exception {
        Random random = new Random(SEED);
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir, s -> s.maxFrameSize(1 << 20))) {
            kafka.broker.createTopic(TopicConfig.of("target", 1));
            int answered = 0;
            int closed = 0;
            for (int i = 0; i < 300; i++) {
                byte[] frame = hostileFrame(random, i);
                try (KafkaWire wire = new KafkaWire(kafka.listener.port())) {
                    wire.sendRaw(frame);
                    if (outcome(wire)) {
                        answered++;
                    } else {
                        closed++;
                    }
                }
            }
            assertThat(answered + closed).isEqualTo(300);
            assertThat(closed).as("most random frames break the protocol").isPositive();
            assertThat(kafka.broker.endOffset(new TopicPartition("target", 0))).isZero();
            try (KafkaWire wire = new KafkaWire(kafka.listener.port())) {
                MetadataResponse metadata = (MetadataResponse) wire.call(ApiKeys.METADATA, (short) 12,
                        new MetadataRequestData().setTopics(null));
                assertThat(metadata.topicMetadata()).extracting(t -> t.topic()).containsExactly("target");
            }
        }
    }

    @Test
    void aLengthAboveTheFrameBoundClosesTheConnectionBeforeTheBodyIsRead() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir, s -> s.maxFrameSize(1 << 20));
             KafkaWire wire = new KafkaWire(kafka.listener.port())) {
            wire.sendRaw(ByteBuffer.allocate(12).putInt(Integer.MAX_VALUE).putInt(0x00000009).putInt(7).array());
            assertThat(wire.closedByServer()).isTrue();
        }
    }

    /** A frame of one of four kinds: random bytes, a Produce header with a random body, a random API key, a truncated header. */
    private static byte[] hostileFrame(Random random, int i) {
        ByteBuffer body;
        switch (i % 4) {
            case 0 -> {
                body = ByteBuffer.allocate(8 + random.nextInt(200));
                random.nextBytes(body.array());
            }
            case 1 -> {
                body = ByteBuffer.allocate(8 + random.nextInt(600));
                random.nextBytes(body.array());
                body.putShort(0, ApiKeys.PRODUCE.id).putShort(2, (short) (3 + random.nextInt(10))).putInt(4, i);
            }
            case 2 -> {
                body = ByteBuffer.allocate(8 + random.nextInt(64));
                random.nextBytes(body.array());
                body.putShort(0, (short) random.nextInt(100)).putShort(2, (short) random.nextInt(20));
            }
            default -> {
                body = ByteBuffer.allocate(8);
                body.putShort(0, ApiKeys.METADATA.id).putShort(2, (short) 12).putInt(4, i); // header cut before client id
            }
        }
        return ByteBuffer.allocate(4 + body.capacity()).putInt(body.capacity()).put(body.array()).array();
    }

    /** True when a response arrived (the connection may stay open), false when the server closed it. */
    private static boolean outcome(KafkaWire wire) throws IOException {
        try {
            byte[] response = wire.receive();
            assertThat(response.length).isGreaterThanOrEqualTo(4);
            return true;
        } catch (java.io.EOFException | java.net.SocketException e) {
            return false;
        }
    }
}
