package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.core.Header;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.records.RecordBatchChecker;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Property: whatever bytes a body holds — random, truncated or mutated — every decoder either returns a message or
 * throws {@link ProtocolException} (or a typed {@link SluiceException} for well-formed but invalid settings); never
 * an IndexOutOfBounds, NegativeArraySize, OutOfMemoryError or other surprise, and never allocates more than the
 * bytes it was given. Seeded, so a failure reproduces; any input found to break a decoder goes in
 * {@link #regressions()}.
 */
class HostileBytesTest {
    private static final int RANDOM_INPUTS_PER_DECODER = 5_000;
    private static final int MUTATIONS_PER_SAMPLE = 2_000;

    private static final Map<String, Function<ByteBuf, ?>> DECODERS = new LinkedHashMap<>();
    private static final Function<ByteBuf, ?> PRODUCE_V1 = in -> Produce.BatchRequest.decode(in, new RecordBatchChecker(), 1 << 20);
    /** Fixes up the CRC of whatever batch the mutated bytes hold, so the record walk behind the CRC check is fuzzed too. */
    private static final Function<ByteBuf, ?> PRODUCE_V1_RECRC = in -> {
        BatchMessagesTest.recrc(in, in.readerIndex() + 1 + 2 + "topic".length() + 4 + 4);
        return PRODUCE_V1.apply(in);
    };

    static {
        DECODERS.put("produce request", PRODUCE_V1);
        DECODERS.put("produce request, CRC made to match", PRODUCE_V1_RECRC);
        DECODERS.put("produce response", Produce.BatchResponse::decode);
        DECODERS.put("fetch request", Fetch.Request::decode);
        DECODERS.put("fetch response", in -> Fetch.Response.decodeBatches(in, new Fetch.Request(0, 1,
                List.of(new Fetch.PartitionRequest(new TopicPartition("topic", 1), 0, 1)))));
        DECODERS.put("metadata request", Metadata.Request::decode);
        DECODERS.put("metadata response", Metadata.Response::decode);
        DECODERS.put("create topic request", CreateTopic.Request::decode);
        DECODERS.put("list offsets request v0", in -> ListOffsets.Request.decode(in, ListOffsets.VERSION_RANGE));
        DECODERS.put("list offsets request v1", in -> ListOffsets.Request.decode(in, ListOffsets.VERSION_TIMESTAMPS));
        DECODERS.put("list offsets response v0", in -> ListOffsets.Response.decode(in, ListOffsets.VERSION_RANGE));
        DECODERS.put("list offsets response v1", in -> ListOffsets.Response.decode(in, ListOffsets.VERSION_TIMESTAMPS));
        DECODERS.put("offset commit request", OffsetCommit.Request::decode);
        DECODERS.put("offset fetch request", OffsetFetch.Request::decode);
        DECODERS.put("offset fetch response", OffsetFetch.Response::decode);
        DECODERS.put("join request", Groups.JoinRequest::decode);
        DECODERS.put("member request", Groups.MemberRequest::decode);
        DECODERS.put("heartbeat request", Groups.HeartbeatRequest::decode);
        DECODERS.put("membership", in -> Groups.readMembership(in, "g"));
        DECODERS.put("authenticate request", Authenticate.Request::decode);
        DECODERS.put("api versions response", ApiVersions.Response::decode);
    }

    private static void decodeSafely(String name, Function<ByteBuf, ?> decoder, byte[] input) {
        ByteBuf in = Unpooled.wrappedBuffer(input);
        try {
            decoder.apply(in);
        } catch (ProtocolException | SluiceException expected) {
            // the only acceptable failures
        } catch (Throwable t) {
            fail(name + " threw " + t + " on input " + hex(input), t);
        }
    }

    @Test
    void randomBodiesOnlyEverFailWithProtocolErrors() {
        SplittableRandom random = new SplittableRandom(20261122);
        DECODERS.forEach((name, decoder) -> {
            for (int i = 0; i < RANDOM_INPUTS_PER_DECODER; i++) {
                byte[] input = new byte[random.nextInt(0, 64)];
                random.nextBytes(input);
                if (random.nextBoolean() && input.length >= 4) {
                    // plausible small counts and lengths reach deeper into the layouts
                    input[0] = 0;
                    input[1] = 0;
                    input[2] = 0;
                    input[3] = (byte) random.nextInt(0, 4);
                }
                decodeSafely(name, decoder, input);
            }
        });
    }

    @Test
    void everyTruncationOfAValidBodyIsAProtocolError() {
        for (Sample s : samples()) {
            byte[] full = s.bytes();
            for (int cut = 0; cut < full.length; cut++) {
                byte[] prefix = java.util.Arrays.copyOf(full, cut);
                ByteBuf in = Unpooled.wrappedBuffer(prefix);
                try {
                    s.decoder().apply(in);
                    fail(s.name() + " accepted a body truncated to " + cut + " of " + full.length + " bytes");
                } catch (ProtocolException expected) {
                    assertThat(expected.getMessage()).isNotBlank();
                }
            }
        }
    }

    @Test
    void mutatedValidBodiesOnlyEverFailWithProtocolErrors() {
        SplittableRandom random = new SplittableRandom(7);
        for (Sample s : samples()) {
            for (int i = 0; i < MUTATIONS_PER_SAMPLE; i++) {
                byte[] input = s.bytes().clone();
                int flips = random.nextInt(1, 4);
                for (int f = 0; f < flips; f++) {
                    input[random.nextInt(input.length)] = (byte) random.nextInt(256);
                }
                decodeSafely(s.name(), s.decoder(), input);
            }
        }
    }

    @Test
    void hugeCountsAndLengthsAreRejectedWithoutAllocating() {
        byte[] hugeBatch = Unpooled.buffer().writeByte(1).writeShort(1).writeByte('t').writeInt(0).writeInt(Integer.MAX_VALUE).array();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> PRODUCE_V1.apply(Unpooled.wrappedBuffer(java.util.Arrays.copyOf(hugeBatch, 12))))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("record batch of 2147483647 bytes");
        // a record that claims a key longer than itself, in a batch whose CRC matches: refused by the length alone
        ByteBuf body = Unpooled.buffer();
        BatchMessagesTest.request(body, List.of(new ProducerRecord("t", 0, null, new byte[1], List.of(), 1L)));
        int batchStart = 1 + 2 + "topic".length() + 4 + 4;
        int keyLength = batchStart + io.sluice.records.RecordBatch.HEADER_SIZE + 4; // after length, attributes, deltas
        body.setByte(keyLength, 0x7E); // zig-zag 63
        BatchMessagesTest.recrc(body, batchStart);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> PRODUCE_V1.apply(body))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("key of 63 bytes");
    }

    /** Inputs that once broke a decoder: kept so they never break it again. */
    @Test
    void regressions() {
        // negative partition in a topic-partition pair must not reach TopicPartition's IllegalArgumentException
        byte[] negativePartition = Unpooled.buffer().writeShort(1).writeByte('g').writeShort(-1).writeInt(-1).writeInt(1)
                .writeShort(1).writeByte('t').writeInt(-1).array();
        decodeSafely("offset fetch request", OffsetFetch.Request::decode, java.util.Arrays.copyOf(negativePartition, 20));
        // a generation below -1 is malformed, not a number the coordinator has to interpret
        byte[] badGeneration = Unpooled.buffer().writeShort(1).writeByte('g').writeShort(1).writeByte('m').writeInt(-7).array();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Groups.HeartbeatRequest.decode(
                Unpooled.wrappedBuffer(java.util.Arrays.copyOf(badGeneration, 10)))).isInstanceOf(ProtocolException.class);
    }

    private record Sample(String name, Function<ByteBuf, ?> decoder, byte[] bytes) {
    }

    private static Sample sample(String name, Function<ByteBuf, ?> decoder, Consumer<ByteBuf> encoder) {
        ByteBuf b = Unpooled.buffer();
        encoder.accept(b);
        byte[] bytes = new byte[b.readableBytes()];
        b.readBytes(bytes);
        return new Sample(name, decoder, bytes);
    }

    private static List<Sample> samples() {
        TopicPartition tp = new TopicPartition("topic", 1);
        ProducerRecord r = new ProducerRecord("topic", 1, "key".getBytes(StandardCharsets.UTF_8),
                "value".getBytes(StandardCharsets.UTF_8), List.of(Header.of("h", "v")), 1L);
        return List.of(
                sample("produce request", PRODUCE_V1, out -> BatchMessagesTest.request(out, List.of(r, r))),
                sample("produce request, CRC made to match", PRODUCE_V1_RECRC, out -> BatchMessagesTest.request(out, List.of(r, r))),
                sample("fetch request", Fetch.Request::decode, new Fetch.Request(10, 100, List.of(new Fetch.PartitionRequest(tp, 3, 50)))::encode),
                sample("fetch response", in -> Fetch.Response.decodeBatches(in, new Fetch.Request(0, 1,
                        List.of(new Fetch.PartitionRequest(tp, 4, 1)))), out -> {
                    byte[] batch = BatchMessagesTest.batch(3, BatchMessagesTest.records(3, 2));
                    out.writeInt(1);
                    int size = Fetch.Response.writePartitionHeader(out, tp, SluiceException.Code.NONE, null, 0, 5);
                    out.writeBytes(batch);
                    Fetch.Response.patchCount(out, size, batch.length);
                }),
                sample("create topic request", CreateTopic.Request::decode, new CreateTopic.Request(TopicConfig.of("topic", 3), false)::encode),
                sample("offset commit request", OffsetCommit.Request::decode, new OffsetCommit.Request("g", "m", 2, Map.of(tp, 5L))::encode),
                sample("join request", Groups.JoinRequest::decode, new Groups.JoinRequest("g", "topic", "m", 4, "c", 1000)::encode),
                sample("metadata request", Metadata.Request::decode, new Metadata.Request(List.of("a", "b"))::encode),
                sample("list offsets request v0", in -> ListOffsets.Request.decode(in, ListOffsets.VERSION_RANGE),
                        out -> ListOffsets.Request.ranges("topic", List.of(0, 1)).encode(out, ListOffsets.VERSION_RANGE)),
                sample("list offsets request v1", in -> ListOffsets.Request.decode(in, ListOffsets.VERSION_TIMESTAMPS),
                        out -> new ListOffsets.Request("topic", List.of(new ListOffsets.PartitionQuery(0, 1_700_000_000_000L),
                                new ListOffsets.PartitionQuery(1, ListOffsets.NO_TIMESTAMP))).encode(out, ListOffsets.VERSION_TIMESTAMPS)),
                sample("list offsets response v1", in -> ListOffsets.Response.decode(in, ListOffsets.VERSION_TIMESTAMPS),
                        out -> new ListOffsets.Response(List.of(new ListOffsets.PartitionOffsets(0, 3, 9, 5)))
                                .encode(out, ListOffsets.VERSION_TIMESTAMPS)));
    }

    private static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x));
        }
        return s.toString();
    }
}
