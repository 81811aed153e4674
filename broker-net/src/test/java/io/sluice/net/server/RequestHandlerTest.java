package io.sluice.net.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException.Code;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.Authenticate;
import io.sluice.net.protocol.CreateTopic;
import io.sluice.net.protocol.Fetch;
import io.sluice.net.protocol.FrameDecoder;
import io.sluice.net.protocol.Frames;
import io.sluice.net.protocol.Produce;
import io.sluice.net.protocol.Wire;
import io.sluice.net.server.internal.RequestHandler;
import io.sluice.net.server.internal.ServerContext;
import io.sluice.net.server.internal.ServerCounters;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The per-connection request pipeline, driven through Netty's {@link EmbeddedChannel} against a real core broker.
 * The admin executor runs inline and produces use acks MEMORY, so every completion happens on the test thread.
 */
class RequestHandlerTest {
    @TempDir
    Path dir;
    private Broker broker;

    @BeforeEach
    void open() {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("t", 2));
    }

    @AfterEach
    void close() {
        broker.close();
    }

    private EmbeddedChannel channel(BrokerServerConfig config) {
        ServerContext context = new ServerContext(broker, config, new ServerCounters(),
                new DefaultChannelGroup(GlobalEventExecutor.INSTANCE), Runnable::run);
        return new EmbeddedChannel(FrameDecoder.forRequests(config.maxFrameSize()), new RequestHandler(context));
    }

    private EmbeddedChannel channel() {
        return channel(BrokerServerConfig.builder().maxFrameSize(4096).build());
    }

    private static ByteBuf request(ApiKey api, int correlationId, Consumer<ByteBuf> body) {
        return request(api, api.minVersion, correlationId, body);
    }

    private static ByteBuf request(ApiKey api, short version, int correlationId, Consumer<ByteBuf> body) {
        ByteBuf b = Unpooled.buffer();
        int start = Frames.startRequest(b, api, version, correlationId);
        body.accept(b);
        Frames.finish(b, start);
        return b;
    }

    private record Response(int correlationId, Code code, ByteBuf body) {
        String message() {
            return Wire.readString(body);
        }
    }

    private static List<Response> responses(EmbeddedChannel ch) {
        ch.runPendingTasks();
        List<Response> out = new ArrayList<>();
        ByteBuf b;
        while ((b = ch.readOutbound()) != null) {
            while (b.readableBytes() >= 4) {
                int length = b.readInt();
                ByteBuf frame = b.readSlice(length);
                out.add(new Response(frame.readInt(), Code.of(frame.readShort()), frame));
            }
        }
        return out;
    }

    /** Acks MEMORY answers before the journal append: wait (bounded) until the journal caught up. */
    private long awaitEndOffsets(long expected, TopicPartition... partitions) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        long sum;
        do {
            sum = 0;
            for (TopicPartition tp : partitions) {
                sum += broker.endOffset(tp);
            }
        } while (sum < expected && System.nanoTime() < deadline);
        return sum;
    }

    private static Consumer<ByteBuf> produceBody(String topic, int partition, String... values) {
        List<ProducerRecord> records = new ArrayList<>();
        for (String v : values) {
            records.add(new ProducerRecord(topic, partition, null, v.getBytes(StandardCharsets.UTF_8), List.of(), 1L));
        }
        return new Produce.Request(Acks.MEMORY, topic, partition, records)::encode;
    }

    @Test
    void unfencedVersion0GroupCallsAreRefused() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(Unpooled.wrappedBuffer(
                request(ApiKey.OFFSET_COMMIT, (short) 0, 1, b -> { Wire.writeString(b, "g"); b.writeInt(0); }),
                request(ApiKey.HEARTBEAT, (short) 0, 2, new io.sluice.net.protocol.Groups.MemberRequest("g", "m")::encode),
                request(ApiKey.OFFSET_COMMIT, (short) 1, 3, new io.sluice.net.protocol.OffsetCommit.Request("g", "nobody", 1,
                        java.util.Map.of(new TopicPartition("t", 0), 5L))::encode)));
        List<Response> r = responses(ch);
        assertThat(r).extracting(Response::code).containsExactly(Code.UNSUPPORTED_VERSION, Code.UNSUPPORTED_VERSION, Code.UNKNOWN_MEMBER);
        assertThat(broker.groups().committed("g", new TopicPartition("t", 0))).isEmpty();
        ch.finishAndReleaseAll();
    }

    @Test
    void heartbeatsDoNotWaitBehindATopicCreation() {
        // the admin thread is stuck (a slow topic creation); group calls run on their own thread
        java.util.ArrayDeque<Runnable> stuckAdmin = new java.util.ArrayDeque<>();
        BrokerServerConfig config = BrokerServerConfig.builder().maxFrameSize(4096).build();
        ServerContext context = new ServerContext(broker, config, new ServerCounters(),
                new DefaultChannelGroup(GlobalEventExecutor.INSTANCE), stuckAdmin::add, Runnable::run);
        EmbeddedChannel admin = new EmbeddedChannel(FrameDecoder.forRequests(4096), new RequestHandler(context));
        EmbeddedChannel member = new EmbeddedChannel(FrameDecoder.forRequests(4096), new RequestHandler(context));
        admin.writeInbound(request(ApiKey.CREATE_TOPIC, 1, new CreateTopic.Request(TopicConfig.of("slow", 1), false)::encode));
        member.writeInbound(request(ApiKey.JOIN_GROUP, 2, new io.sluice.net.protocol.Groups.JoinRequest("g", "t", null, -1, "c", 10_000)::encode));
        assertThat(responses(admin)).isEmpty();
        List<Response> joined = responses(member);
        assertThat(joined).extracting(Response::code).containsExactly(Code.NONE);
        assertThat(io.sluice.net.protocol.Groups.readMembership(joined.get(0).body(), "g").generation()).isEqualTo(1);
        stuckAdmin.forEach(Runnable::run);
        assertThat(responses(admin)).extracting(Response::code).containsExactly(Code.NONE);
        admin.finishAndReleaseAll();
        member.finishAndReleaseAll();
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrderWithTheirCorrelationIds() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(Unpooled.wrappedBuffer(
                request(ApiKey.API_VERSIONS, 1, b -> { }),
                request(ApiKey.PRODUCE, 2, produceBody("t", 0, "a", "b")),
                request(ApiKey.CREATE_TOPIC, 3, new CreateTopic.Request(TopicConfig.of("u", 1), false)::encode),
                request(ApiKey.PRODUCE, 4, produceBody("u", 0, "c")),
                request(ApiKey.LIST_OFFSETS, 5, b -> { Wire.writeString(b, "t"); b.writeInt(0); })));
        List<Response> r = responses(ch);
        assertThat(r).extracting(Response::correlationId).containsExactly(1, 2, 3, 4, 5);
        assertThat(r).extracting(Response::code).containsOnly(Code.NONE);
        assertThat(Produce.Response.decode(r.get(1).body()).offsets()).containsExactly(-1, -1);
        assertThat(ch.isActive()).isTrue();
        ch.finishAndReleaseAll();
    }

    @Test
    void unknownApiKeysAndVersionsAreAnsweredWithUnsupportedVersionAndTheConnectionStaysOpen() {
        EmbeddedChannel ch = channel();
        ByteBuf unknownKey = Unpooled.buffer().writeInt(8).writeShort(999).writeShort(0).writeInt(7);
        ByteBuf unknownVersion = Unpooled.buffer().writeInt(8).writeShort(ApiKey.METADATA.id).writeShort(42).writeInt(8);
        ch.writeInbound(unknownKey, unknownVersion, request(ApiKey.API_VERSIONS, 9, b -> { }));
        List<Response> r = responses(ch);
        assertThat(r).extracting(Response::code).containsExactly(Code.UNSUPPORTED_VERSION, Code.UNSUPPORTED_VERSION, Code.NONE);
        assertThat(r.get(0).message()).contains("unknown api key 999");
        assertThat(r.get(1).message()).contains("version 42");
        assertThat(ch.isActive()).isTrue();
        ch.finishAndReleaseAll();
    }

    @Test
    void aMalformedBodyIsAnsweredWithInvalidRequestAndLaterRequestsStillWork() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(request(ApiKey.PRODUCE, 1, b -> b.writeByte(1).writeShort(1000)),
                request(ApiKey.PRODUCE, 2, produceBody("t", 1, "ok")));
        List<Response> r = responses(ch);
        assertThat(r.get(0).code()).isEqualTo(Code.INVALID_REQUEST);
        assertThat(r.get(0).message()).contains("truncated");
        assertThat(r.get(1).code()).isEqualTo(Code.NONE);
        assertThat(awaitEndOffsets(1, new TopicPartition("t", 1))).isEqualTo(1);
        ch.finishAndReleaseAll();
    }

    @Test
    void producingToAnUnknownTopicOrPartitionIsAnErrorAndWritesNothing() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(request(ApiKey.PRODUCE, 1, produceBody("nope", 0, "x")),
                request(ApiKey.PRODUCE, 2, produceBody("t", 5, "x")));
        List<Response> r = responses(ch);
        assertThat(r.get(0).code()).isEqualTo(Code.UNKNOWN_TOPIC);
        assertThat(r.get(1).code()).isEqualTo(Code.INVALID_CONFIG);
        assertThat(r.get(1).message()).contains("partition");
        ch.finishAndReleaseAll();
    }

    @Test
    void anOversizedFrameClosesOnlyThatConnection() {
        EmbeddedChannel bad = channel();
        EmbeddedChannel good = channel();
        bad.writeInbound(Unpooled.buffer().writeInt(1_000_000).writeLong(0));
        assertThat(bad.isActive()).isFalse();
        good.writeInbound(request(ApiKey.API_VERSIONS, 1, b -> { }));
        assertThat(responses(good)).extracting(Response::code).containsExactly(Code.NONE);
        bad.finishAndReleaseAll();
        good.finishAndReleaseAll();
    }

    @Test
    void randomGarbageNeverKillsTheHandlerOnlyItsConnection() {
        SplittableRandom random = new SplittableRandom(11);
        for (int i = 0; i < 300; i++) {
            EmbeddedChannel ch = channel();
            byte[] garbage = new byte[random.nextInt(1, 512)];
            random.nextBytes(garbage);
            if (random.nextBoolean() && garbage.length > 12) {
                // a plausible frame header around a random body
                ByteBuf b = Unpooled.wrappedBuffer(garbage);
                b.setInt(0, garbage.length - 4);
                b.setShort(4, random.nextInt(0, ApiKey.values().length));
                b.setShort(6, 0);
            }
            try {
                ch.writeInbound(Unpooled.wrappedBuffer(garbage));
            } catch (Exception decoderFailure) {
                // EmbeddedChannel rethrows what the pipeline reported; the handler closed the channel
            }
            for (Response r : responses(ch)) {
                assertThat(r.code()).isNotEqualTo(Code.UNKNOWN);
            }
            ch.finishAndReleaseAll();
        }
        EmbeddedChannel ch = channel();
        ch.writeInbound(request(ApiKey.PRODUCE, 1, produceBody("t", 0, "still fine")));
        assertThat(responses(ch)).extracting(Response::code).containsExactly(Code.NONE);
        ch.finishAndReleaseAll();
    }

    @Test
    void fetchReturnsWhatWasProducedFromTheRequestedOffset() throws Exception {
        try (var producer = broker.newProducer(io.sluice.core.ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 5; i++) {
                producer.send(new ProducerRecord("t", 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8), List.of(), -1)).get();
            }
        }
        EmbeddedChannel ch = channel();
        TopicPartition tp = new TopicPartition("t", 0);
        ch.writeInbound(request(ApiKey.FETCH, 1, new Fetch.Request(0, 1 << 20, List.of(new Fetch.PartitionRequest(tp, 2, 1 << 20)))::encode),
                request(ApiKey.FETCH, 2, new Fetch.Request(0, 1 << 20, List.of(new Fetch.PartitionRequest(tp, 9, 1 << 20)))::encode));
        List<Response> r = responses(ch);
        Fetch.PartitionData data = Fetch.Response.decode(r.get(0).body()).partitions().get(0);
        assertThat(data.records()).extracting(rec -> new String(rec.value(), StandardCharsets.UTF_8)).containsExactly("v2", "v3", "v4");
        assertThat(data.endOffset()).isEqualTo(5);
        Fetch.PartitionData outOfRange = Fetch.Response.decode(r.get(1).body()).partitions().get(0);
        assertThat(outOfRange.error()).isEqualTo(Code.OFFSET_OUT_OF_RANGE);
        ch.finishAndReleaseAll();
    }

    @Test
    void withATokenConfiguredEveryApiButApiVersionsRequiresAuthenticationAndAWrongTokenClosesTheConnection() {
        BrokerServerConfig config = BrokerServerConfig.builder().maxFrameSize(4096).authToken("s3cret-token-value").build();
        EmbeddedChannel ch = channel(config);
        ch.writeInbound(request(ApiKey.API_VERSIONS, 1, b -> { }), request(ApiKey.PRODUCE, 2, produceBody("t", 0, "x")),
                request(ApiKey.AUTHENTICATE, 3, new Authenticate.Request("s3cret-token-value")::encode),
                request(ApiKey.PRODUCE, 4, produceBody("t", 0, "y")));
        assertThat(responses(ch)).extracting(Response::code)
                .containsExactly(Code.NONE, Code.AUTHENTICATION_FAILED, Code.NONE, Code.NONE);
        ch.finishAndReleaseAll();

        EmbeddedChannel wrong = channel(config);
        wrong.writeInbound(request(ApiKey.AUTHENTICATE, 1, new Authenticate.Request("guess")::encode),
                request(ApiKey.METADATA, 2, b -> b.writeInt(0)));
        List<Response> r = responses(wrong);
        assertThat(r).extracting(Response::code).containsExactly(Code.AUTHENTICATION_FAILED);
        wrong.runPendingTasks();
        assertThat(wrong.isActive()).isFalse();
        wrong.finishAndReleaseAll();
    }

    @Test
    void withOneRequestInFlightPipelinedRequestsStillAllGetAnsweredInOrder() {
        EmbeddedChannel ch = channel(BrokerServerConfig.builder().maxFrameSize(4096).maxInFlightPerConnection(1).build());
        List<ByteBuf> frames = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            frames.add(request(ApiKey.PRODUCE, i, produceBody("t", i % 2, "r" + i)));
        }
        ch.writeInbound(Unpooled.wrappedBuffer(frames.toArray(new ByteBuf[0])));
        List<Response> all = new ArrayList<>();
        for (int round = 0; round < 100 && all.size() < 20; round++) {
            all.addAll(responses(ch));
        }
        assertThat(all).extracting(Response::correlationId).containsExactlyElementsOf(
                java.util.stream.IntStream.range(0, 20).boxed().toList());
        assertThat(awaitEndOffsets(20, new TopicPartition("t", 0), new TopicPartition("t", 1))).isEqualTo(20);
        ch.finishAndReleaseAll();
    }

    @Test
    void thousandsOfRequestsQueuedBehindACreateTopicAreAllAnsweredWithoutRecursion() {
        EmbeddedChannel ch = channel();
        int n = 20_000;
        ByteBuf all = Unpooled.buffer();
        // the create holds a barrier, so the others queue up and then complete synchronously one after another
        ByteBuf create = request(ApiKey.CREATE_TOPIC, -1, new CreateTopic.Request(TopicConfig.of("queued", 1), false)::encode);
        all.writeBytes(create);
        create.release();
        for (int i = 0; i < n; i++) {
            ByteBuf r = request(ApiKey.LIST_OFFSETS, i, b -> { Wire.writeString(b, "t"); b.writeInt(0); });
            all.writeBytes(r);
            r.release();
        }
        ch.writeInbound(all);
        List<Response> r = responses(ch);
        assertThat(r).hasSize(n + 1);
        assertThat(r.get(n).correlationId()).isEqualTo(n - 1);
        assertThat(r).extracting(Response::code).containsOnly(Code.NONE);
        ch.finishAndReleaseAll();
    }
}
