package io.sluice.net.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
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
import io.sluice.records.RecordBatch;
import io.sluice.records.RecordBatchWriter;
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
        ServerContext context = new ServerContext(broker, config, new ServerCounters(), Runnable::run);
        return new EmbeddedChannel(FrameDecoder.forRequests(config.maxFrameSize()), new RequestHandler(context));
    }

    private EmbeddedChannel channel(ServerContext context, io.netty.util.concurrent.Ticker ticker) {
        return EmbeddedChannel.builder().ticker(ticker)
                .handlers(FrameDecoder.forRequests(context.config().maxFrameSize()), new RequestHandler(context)).build();
    }

    private ServerContext context(Broker broker, BrokerServerConfig config, ServerCounters counters) {
        return new ServerContext(broker, config, counters, Runnable::run);
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

    /**
     * The responses written so far. Each written buffer is released here (the handler allocated it from the channel's
     * allocator, and the test is its last reader); a response's body is a heap copy the test may read at leisure.
     */
    private static List<Response> responses(EmbeddedChannel ch) {
        ch.runPendingTasks();
        List<Response> out = new ArrayList<>();
        ByteBuf b;
        while ((b = ch.readOutbound()) != null) {
            try {
                while (b.readableBytes() >= 4) {
                    int length = b.readInt();
                    ByteBuf frame = Unpooled.wrappedBuffer(ByteBufUtil.getBytes(b, b.readerIndex(), length));
                    b.skipBytes(length);
                    out.add(new Response(frame.readInt(), Code.of(frame.readShort()), frame));
                }
            } finally {
                b.release();
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
        return produceBatchBody(topic, partition, false, values);
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
        ServerContext context = new ServerContext(broker, config, new ServerCounters(), stuckAdmin::add,
                Runnable::run);
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
        assertThat(Produce.BatchResponse.decode(r.get(1).body()).baseOffset()).isEqualTo(-1); // acks MEMORY
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

    private static Consumer<ByteBuf> produceBatchBody(String topic, int partition, boolean damaged, String... values) {
        byte[][] bytes = new byte[values.length][];
        for (int i = 0; i < values.length; i++) {
            bytes[i] = values[i].getBytes(StandardCharsets.UTF_8);
        }
        return produceBatchBody(topic, partition, damaged, bytes);
    }

    private static Consumer<ByteBuf> produceBatchBody(String topic, int partition, boolean damaged, byte[]... values) {
        return out -> Produce.encodeBatch(out, Acks.MEMORY, topic, partition, b -> {
            int size = RecordBatch.HEADER_SIZE;
            for (byte[] v : values) {
                size += RecordBatchWriter.maxRecordSize(-1, v.length, List.of());
            }
            java.nio.ByteBuffer batch = java.nio.ByteBuffer.allocate(size);
            RecordBatchWriter w = new RecordBatchWriter();
            w.begin(batch, 0);
            for (byte[] v : values) {
                w.append(1L, null, -1, v, v.length, List.of());
            }
            int length = w.finish(0);
            if (damaged) {
                batch.put(length - 1, (byte) (batch.get(length - 1) ^ 0x01));
            }
            b.writeBytes(batch.array(), 0, length);
        });
    }

    /** A fetch response to {@code request}, its batches decoded. */
    private static Fetch.Response fetched(Response r, Fetch.Request request) {
        return Fetch.Response.decodeBatches(r.body(), request);
    }

    @Test
    void aProduceV1BatchIsCheckedWholeBeforeAnythingIsStoredAndAnsweredWithItsBaseOffset() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(request(ApiKey.PRODUCE, Produce.VERSION_BATCH, 1, produceBatchBody("t", 1, true, "a", "b")),
                request(ApiKey.PRODUCE, Produce.VERSION_BATCH, 2, produceBatchBody("t", 1, false, "c", "d", "e")),
                request(ApiKey.PRODUCE, Produce.VERSION_BATCH, 3, produceBatchBody("t", 5, false, "f")),
                request(ApiKey.PRODUCE, Produce.VERSION_BATCH, 4, produceBatchBody("nope", 0, false, "g")));
        List<Response> r = responses(ch);
        assertThat(r).extracting(Response::correlationId).containsExactly(1, 2, 3, 4);
        assertThat(r.get(0).code()).isEqualTo(Code.INVALID_REQUEST);
        assertThat(r.get(0).message()).contains("record batch", "CRC32C mismatch");
        assertThat(r.get(1).code()).isEqualTo(Code.NONE);
        assertThat(Produce.BatchResponse.decode(r.get(1).body()).baseOffset()).isEqualTo(-1); // acks MEMORY
        assertThat(r.get(2).code()).isEqualTo(Code.INVALID_CONFIG);
        assertThat(r.get(2).message()).contains("partition");
        assertThat(r.get(3).code()).isEqualTo(Code.UNKNOWN_TOPIC);
        assertThat(awaitEndOffsets(3, new TopicPartition("t", 1))).isEqualTo(3);
        try (io.sluice.core.PartitionReader reader = broker.openReader(new TopicPartition("t", 1))) {
            List<String> values = new ArrayList<>();
            reader.read(10, 1 << 20, rec -> values.add(new String(rec.value(), StandardCharsets.UTF_8)));
            assertThat(values).containsExactly("c", "d", "e");
        }
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
        Fetch.Request from2 = new Fetch.Request(0, 1 << 20, List.of(new Fetch.PartitionRequest(tp, 2, 1 << 20)));
        Fetch.Request from9 = new Fetch.Request(0, 1 << 20, List.of(new Fetch.PartitionRequest(tp, 9, 1 << 20)));
        ch.writeInbound(request(ApiKey.FETCH, 1, from2::encode), request(ApiKey.FETCH, 2, from9::encode));
        List<Response> r = responses(ch);
        Fetch.PartitionData data = fetched(r.get(0), from2).partitions().get(0);
        assertThat(data.records()).extracting(rec -> new String(rec.value(), StandardCharsets.UTF_8)).containsExactly("v2", "v3", "v4");
        assertThat(data.endOffset()).isEqualTo(5);
        Fetch.PartitionData outOfRange = fetched(r.get(1), from9).partitions().get(0);
        assertThat(outOfRange.error()).isEqualTo(Code.OFFSET_OUT_OF_RANGE);
        ch.finishAndReleaseAll();
    }

    @Test
    void aReaderNotFetchedForReaderIdleMsIsClosedAtTheConnectionsNextFetchAndReopenedWhenFetchedAgain() throws Exception {
        try (var producer = broker.newProducer(io.sluice.core.ProducerConfig.DEFAULT)) {
            for (int p = 0; p < 2; p++) {
                for (int i = 0; i < 3; i++) {
                    producer.send(new ProducerRecord("t", p, null, ("p" + p + "-" + i).getBytes(StandardCharsets.UTF_8), List.of(), -1)).get();
                }
            }
        }
        EmbeddedChannel ch = channel(BrokerServerConfig.builder().maxFrameSize(4096).readerIdleMillis(200).build());
        RequestHandler connection = ch.pipeline().get(RequestHandler.class);
        TopicPartition p0 = new TopicPartition("t", 0);
        TopicPartition p1 = new TopicPartition("t", 1);
        Fetch.Request fetch0 = new Fetch.Request(0, 1 << 20, List.of(new Fetch.PartitionRequest(p0, 1, 1 << 20)));
        Fetch.Request fetch1 = new Fetch.Request(0, 1 << 20, List.of(new Fetch.PartitionRequest(p1, 0, 1 << 20)));
        ch.writeInbound(request(ApiKey.FETCH, 1, fetch0::encode), request(ApiKey.FETCH, 2, fetch1::encode));
        assertThat(responses(ch)).hasSize(2);
        assertThat(connection.openReaders()).containsExactlyInAnyOrder(p0, p1);

        // the consumer's assignment moved: it fetches only partition 1 from now on; partition 0's reader goes once it
        // has not been fetched for 200 ms (the connection looks at its next fetch, never on a timer of its own)
        int[] correlation = {3};
        io.sluice.testkit.Await.until("partition 0's reader closed once unfetched for 200 ms", java.time.Duration.ofSeconds(30), () -> {
            ch.writeInbound(request(ApiKey.FETCH, correlation[0]++, fetch1::encode));
            assertThat(fetched(responses(ch).get(0), fetch1).partitions().get(0).records()).hasSize(3);
            return !connection.openReaders().contains(p0);
        });
        assertThat(connection.openReaders()).containsExactly(p1);

        // fetched again: a fresh reader, positioned where the fetch asks
        ch.writeInbound(request(ApiKey.FETCH, correlation[0], fetch0::encode));
        Fetch.PartitionData again = fetched(responses(ch).get(0), fetch0).partitions().get(0);
        assertThat(again.records()).extracting(rec -> new String(rec.value(), StandardCharsets.UTF_8)).containsExactly("p0-1", "p0-2");
        assertThat(connection.openReaders()).containsExactlyInAnyOrder(p0, p1);
        ch.finishAndReleaseAll();
        assertThat(connection.openReaders()).isEmpty();
    }

    @Test
    void withATokenConfiguredEveryApiButApiVersionsRequiresAuthenticationAndAWrongTokenClosesTheConnection() {
        BrokerServerConfig config = BrokerServerConfig.builder().maxFrameSize(4096).authToken("s3cret-token-value").build();
        EmbeddedChannel ch = channel(config);
        ch.writeInbound(request(ApiKey.API_VERSIONS, 1, b -> { }), request(ApiKey.PRODUCE, 2, produceBody("t", 0, "x")),
                request(ApiKey.AUTHENTICATE, 3, new Authenticate.Request("s3cret-token-value")::encode),
                request(ApiKey.PRODUCE, 4, produceBody("t", 0, "y")));
        // anything but API_VERSIONS / AUTHENTICATE before authenticating is answered, then the connection is closed
        assertThat(responses(ch)).extracting(Response::code).containsExactly(Code.NONE, Code.AUTHENTICATION_FAILED);
        ch.runPendingTasks();
        assertThat(ch.isActive()).isFalse();
        ch.finishAndReleaseAll();

        EmbeddedChannel ok = channel(config);
        ok.writeInbound(request(ApiKey.API_VERSIONS, 1, b -> { }),
                request(ApiKey.AUTHENTICATE, 2, new Authenticate.Request("s3cret-token-value")::encode),
                request(ApiKey.PRODUCE, 3, produceBody("t", 0, "y")));
        assertThat(responses(ok)).extracting(Response::code).containsExactly(Code.NONE, Code.NONE, Code.NONE);
        assertThat(ok.isActive()).isTrue();
        ok.finishAndReleaseAll();

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

    // ---------------------------------------------------------------- before authentication (issue 11)

    private static final String TOKEN = "s3cret-token-value";

    private static BrokerServerConfig.Builder withToken() {
        return BrokerServerConfig.builder().maxFrameSize(1 << 20).authToken(TOKEN).authMaxFrameBytes(256)
                .authTimeoutMillis(5_000).maxUnauthenticatedConnections(2);
    }

    /** Only a frame header: the length field announcing {@code length} bytes, and the fixed request header. */
    private static ByteBuf frameHeader(int length, ApiKey api) {
        ByteBuf b = Unpooled.buffer(12);
        b.writeInt(length).writeShort(api.id).writeShort(0).writeInt(1);
        return b;
    }

    @Test
    void beforeAuthenticatingAFrameOverAuthMaxFrameBytesClosesTheConnectionFromItsLengthFieldAlone() {
        ServerCounters counters = new ServerCounters();
        ServerContext context = context(broker, withToken().build(), counters);
        EmbeddedChannel ch = channel(context, io.netty.util.concurrent.Ticker.newMockTicker());
        ch.writeInbound(frameHeader(1 << 20, ApiKey.PRODUCE)); // 1 MiB announced: allowed after authentication only
        ch.runPendingTasks();
        assertThat(ch.isActive()).isFalse();
        assertThat(counters.snapshot().unauthenticatedCloses()).isEqualTo(1);
        assertThat(counters.snapshot().unauthenticatedConnections()).isZero();
        ch.finishAndReleaseAll();

        // the same frame after authenticating is fine: the limit is lifted to maxFrameSize
        EmbeddedChannel authed = channel(context, io.netty.util.concurrent.Ticker.newMockTicker());
        String big = "v".repeat(4096);
        authed.writeInbound(request(ApiKey.AUTHENTICATE, 1, new Authenticate.Request(TOKEN)::encode),
                request(ApiKey.PRODUCE, 2, produceBody("t", 0, big)));
        assertThat(responses(authed)).extracting(Response::code).containsExactly(Code.NONE, Code.NONE);
        assertThat(counters.snapshot().unauthenticatedConnections()).isZero();
        authed.finishAndReleaseAll();
    }

    @Test
    void aConnectionThatDoesNotAuthenticateWithinAuthTimeoutIsClosedAndOneThatDidIsNot() {
        ServerCounters counters = new ServerCounters();
        ServerContext context = context(broker, withToken().maxUnauthenticatedConnections(3).build(), counters);
        io.netty.util.concurrent.MockTicker ticker = io.netty.util.concurrent.Ticker.newMockTicker();
        EmbeddedChannel silent = channel(context, ticker);
        EmbeddedChannel versionsOnly = channel(context, ticker);
        EmbeddedChannel authed = channel(context, ticker);
        versionsOnly.writeInbound(request(ApiKey.API_VERSIONS, 1, b -> { }));
        authed.writeInbound(request(ApiKey.AUTHENTICATE, 1, new Authenticate.Request(TOKEN)::encode));
        assertThat(responses(authed)).extracting(Response::code).containsExactly(Code.NONE);
        assertThat(counters.snapshot().unauthenticatedConnections()).isEqualTo(2);

        ticker.advance(4_999, java.util.concurrent.TimeUnit.MILLISECONDS);
        for (EmbeddedChannel ch : List.of(silent, versionsOnly, authed)) {
            ch.runScheduledPendingTasks();
            assertThat(ch.isActive()).isTrue();
        }
        ticker.advance(1, java.util.concurrent.TimeUnit.MILLISECONDS);
        for (EmbeddedChannel ch : List.of(silent, versionsOnly, authed)) {
            ch.runScheduledPendingTasks();
        }
        assertThat(silent.isActive()).isFalse();
        assertThat(versionsOnly.isActive()).isFalse();
        assertThat(authed.isActive()).isTrue();
        assertThat(counters.snapshot().unauthenticatedCloses()).isEqualTo(2);
        assertThat(counters.snapshot().unauthenticatedConnections()).isZero();
        for (EmbeddedChannel ch : List.of(silent, versionsOnly, authed)) {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void anIdleConnectionArmsNoTimerAndOnlyAnIncompleteFrameArmsTheFrameTimeoutCheck() {
        EmbeddedChannel ch = channel(BrokerServerConfig.builder().maxFrameSize(4096).frameTimeoutMillis(30_000).build());
        ch.writeInbound(request(ApiKey.API_VERSIONS, 1, b -> { }));
        assertThat(responses(ch)).extracting(Response::code).containsExactly(Code.NONE);
        assertThat(ch.runScheduledPendingTasks()).as("next timer of an idle connection (-1: none)").isEqualTo(-1);

        ByteBuf whole = request(ApiKey.API_VERSIONS, 2, b -> { });
        ch.writeInbound(whole.readRetainedSlice(5)); // the length field and one byte: the frame is incomplete
        long next = ch.runScheduledPendingTasks();
        assertThat(next).as("a frame-timeout check is armed").isGreaterThan(0)
                .isLessThanOrEqualTo(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(30_000) + 1);

        ch.writeInbound(whole); // the rest arrives: answered; the armed check will find nothing and not re-arm
        assertThat(responses(ch)).extracting(Response::correlationId).containsExactly(2);
        assertThat(ch.isActive()).isTrue();
        ch.finishAndReleaseAll();
    }

    @Test
    void connectionsBeyondMaxUnauthenticatedConnectionsAreClosedAtOnceAndAuthenticatingFreesASlot() {
        ServerCounters counters = new ServerCounters();
        ServerContext context = context(broker, withToken().build(), counters); // at most 2 unauthenticated
        io.netty.util.concurrent.MockTicker ticker = io.netty.util.concurrent.Ticker.newMockTicker();
        EmbeddedChannel first = channel(context, ticker);
        EmbeddedChannel second = channel(context, ticker);
        EmbeddedChannel third = channel(context, ticker);
        assertThat(first.isActive()).isTrue();
        assertThat(second.isActive()).isTrue();
        assertThat(third.isActive()).isFalse();
        assertThat(counters.snapshot().unauthenticatedRefused()).isEqualTo(1);

        first.writeInbound(request(ApiKey.AUTHENTICATE, 1, new Authenticate.Request(TOKEN)::encode));
        assertThat(responses(first)).extracting(Response::code).containsExactly(Code.NONE);
        EmbeddedChannel fourth = channel(context, ticker);
        assertThat(fourth.isActive()).isTrue();
        second.close();
        EmbeddedChannel fifth = channel(context, ticker);
        assertThat(fifth.isActive()).isTrue();
        assertThat(counters.snapshot().unauthenticatedConnections()).isEqualTo(2);
        for (EmbeddedChannel ch : List.of(first, second, third, fourth, fifth)) {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void beforeAuthenticatingAnUnknownApiKeyClosesTheConnection() {
        ServerCounters counters = new ServerCounters();
        EmbeddedChannel ch = channel(context(broker, withToken().build(), counters), io.netty.util.concurrent.Ticker.newMockTicker());
        ch.writeInbound(request(ApiKey.API_VERSIONS, 1, b -> { }));
        ByteBuf unknown = Unpooled.buffer();
        unknown.writeInt(8).writeShort(999).writeShort(0).writeInt(2);
        ch.writeInbound(unknown);
        assertThat(responses(ch)).extracting(Response::code).containsExactly(Code.NONE, Code.UNSUPPORTED_VERSION);
        ch.runPendingTasks();
        assertThat(ch.isActive()).isFalse();
        assertThat(counters.snapshot().unauthenticatedCloses()).isEqualTo(1);
        ch.finishAndReleaseAll();
    }

    // ---------------------------------------------------------------- produce size check, unexpected failures

    @Test
    void aRecordOverMaxEventSizeFailsItsWholeBatchBeforeAnythingIsStored() {
        int maxEventSize = broker.config().maxEventSize();
        EmbeddedChannel ch = channel(BrokerServerConfig.builder().maxFrameSize(maxEventSize + (64 << 10)).build());
        // record 0 is small, record 1 is one byte over maxEventSize (26 bytes of record overhead + its value):
        // the batch is refused whole, record 0 included
        byte[] tooLarge = new byte[maxEventSize - 26 + 1];
        ByteBuf frame = request(ApiKey.PRODUCE, 7, produceBatchBody("t", 0, false, new byte[] {'a'}, tooLarge));
        ch.writeInbound(frame, request(ApiKey.PRODUCE, 8, produceBody("t", 0, "after")));
        List<Response> r = responses(ch);
        assertThat(r).extracting(Response::code).containsExactly(Code.RECORD_TOO_LARGE, Code.NONE);
        assertThat(r.get(0).message()).contains("record 1 of " + (maxEventSize + 1) + " bytes exceeds maxEventSize=" + maxEventSize);
        assertThat(awaitEndOffsets(1, new TopicPartition("t", 0))).as("only the later request was written").isEqualTo(1);
        ch.finishAndReleaseAll();
    }

    @Test
    void anOperationThatFailsUnexpectedlyIsAnsweredUnknownAndTheConnectionServesTheNextRequest() {
        io.sluice.net.testing.FaultInjectingBroker faulty = new io.sluice.net.testing.FaultInjectingBroker(broker);
        ServerCounters counters = new ServerCounters();
        ServerContext context = context(faulty, BrokerServerConfig.builder().maxFrameSize(4096).build(), counters);
        EmbeddedChannel ch = channel(context, io.netty.util.concurrent.Ticker.newMockTicker());
        ch.writeInbound(request(ApiKey.PRODUCE, 1, produceBody("t", 0, "a", "b")));
        assertThat(responses(ch)).extracting(Response::code).containsExactly(Code.NONE);
        awaitEndOffsets(2, new TopicPartition("t", 0));

        // a fetch whose reader fails with an unexpected runtime exception (event loop)
        faulty.openReaderFault = () -> new IllegalStateException("injected reader failure");
        // a topic creation failing with an Error (admin thread)
        faulty.createTopicFault = () -> new AssertionError("injected creation failure");
        ch.writeInbound(request(ApiKey.FETCH, 2, new Fetch.Request(0, 1 << 16,
                        List.of(new Fetch.PartitionRequest(new TopicPartition("t", 0), 0, 1 << 16)))::encode),
                request(ApiKey.CREATE_TOPIC, 3, new CreateTopic.Request(TopicConfig.of("boom", 1), false)::encode),
                request(ApiKey.LIST_OFFSETS, 4, b -> { Wire.writeString(b, "t"); b.writeInt(0); }));
        List<Response> r = responses(ch);
        assertThat(r).extracting(Response::correlationId).containsExactly(2, 3, 4);
        assertThat(r).extracting(Response::code).containsExactly(Code.UNKNOWN, Code.UNKNOWN, Code.NONE);
        assertThat(r.get(0).message()).contains("injected reader failure");
        assertThat(r.get(1).message()).contains("injected creation failure");
        assertThat(counters.snapshot().internalErrors()).isEqualTo(2);

        // the faults cleared, the same connection fetches and creates again
        faulty.openReaderFault = null;
        faulty.createTopicFault = null;
        Fetch.Request fromStart = new Fetch.Request(0, 1 << 16, List.of(new Fetch.PartitionRequest(new TopicPartition("t", 0), 0, 1 << 16)));
        ch.writeInbound(request(ApiKey.FETCH, 5, fromStart::encode),
                request(ApiKey.CREATE_TOPIC, 6, new CreateTopic.Request(TopicConfig.of("fine", 1), false)::encode));
        r = responses(ch);
        assertThat(r).extracting(Response::code).containsExactly(Code.NONE, Code.NONE);
        assertThat(fetched(r.get(0), fromStart).partitions().get(0).records()).hasSize(2);
        assertThat(ch.isActive()).isTrue();
        ch.finishAndReleaseAll();
    }
}
