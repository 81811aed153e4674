package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.core.Acks;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicDescription;
import io.sluice.core.TopicPartition;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every request and response decodes to what was encoded. */
class MessageRoundTripTest {

    @Test
    void fetchRequestRoundTrips() {
        TopicPartition tp = new TopicPartition("t", 1);
        ByteBuf b = Unpooled.buffer();
        new Fetch.Request(250, 4096, List.of(new Fetch.PartitionRequest(tp, 10, 1024))).encode(b);
        Fetch.Request req = Fetch.Request.decode(b);
        assertThat(req.maxWaitMillis()).isEqualTo(250);
        assertThat(req.maxBytes()).isEqualTo(4096);
        assertThat(req.partitions()).containsExactly(new Fetch.PartitionRequest(tp, 10, 1024));
    }

    @Test
    void metadataAndCreateTopicCarryTheTopicDescription() {
        TopicDescription d = new TopicDescription(new TopicConfig("t", 2, 1000, -1, true),
                List.of(new TopicDescription.PartitionInfo(0, 0, 5, 100), new TopicDescription.PartitionInfo(1, 2, 9, 300)));
        ByteBuf b = Unpooled.buffer();
        new Metadata.Response(List.of(new Metadata.TopicResult("t", SluiceException.Code.NONE, null, d),
                new Metadata.TopicResult("nope", SluiceException.Code.UNKNOWN_TOPIC, "unknown topic 'nope'", null))).encode(b);
        Metadata.Response r = Metadata.Response.decode(b);
        assertThat(r.topics().get(0).description()).isEqualTo(d);
        assertThat(r.topics().get(1).error()).isEqualTo(SluiceException.Code.UNKNOWN_TOPIC);

        ByteBuf c = Unpooled.buffer();
        new CreateTopic.Request(d.config(), true).encode(c);
        CreateTopic.Request cr = CreateTopic.Request.decode(c);
        assertThat(cr.config()).isEqualTo(d.config());
        assertThat(cr.ifAbsent()).isTrue();
    }

    @Test
    void groupOffsetAndListOffsetMessagesRoundTrip() {
        TopicPartition tp = new TopicPartition("t", 3);
        ByteBuf b = Unpooled.buffer();
        new Groups.JoinRequest("g", "t", null, -1, "c", 5000).encode(b);
        assertThat(Groups.JoinRequest.decode(b)).isEqualTo(new Groups.JoinRequest("g", "t", null, -1, "c", 5000));

        ByteBuf m = Unpooled.buffer();
        Groups.writeMembership(m, new ConsumerGroups.Membership("g", "m-1", 4, Set.of(tp)));
        assertThat(Groups.readMembership(m, "g")).isEqualTo(new ConsumerGroups.Membership("g", "m-1", 4, Set.of(tp)));

        ByteBuf oc = Unpooled.buffer();
        new OffsetCommit.Request("g", "m-1", 3, Map.of(tp, 17L)).encode(oc);
        assertThat(OffsetCommit.Request.decode(oc)).isEqualTo(new OffsetCommit.Request("g", "m-1", 3, Map.of(tp, 17L)));

        ByteBuf of = Unpooled.buffer();
        new OffsetFetch.Response(Map.of(tp, -1L)).encode(of);
        assertThat(OffsetFetch.Response.decode(of).offsets()).containsEntry(tp, -1L);

        ByteBuf lo = Unpooled.buffer();
        new ListOffsets.Response(List.of(new ListOffsets.PartitionOffsets(3, 1, 9, 4))).encode(lo, ListOffsets.VERSION_TIMESTAMPS);
        assertThat(ListOffsets.Response.decode(lo).partitions()).containsExactly(new ListOffsets.PartitionOffsets(3, 1, 9, 4));
    }

    @Test
    void listOffsetsVersionOneCarriesATimestampPerPartitionAndVersionZeroNone() {
        ListOffsets.Request withTimestamps = new ListOffsets.Request("t", List.of(
                new ListOffsets.PartitionQuery(0, 1_700_000_000_123L), new ListOffsets.PartitionQuery(2, ListOffsets.NO_TIMESTAMP)));
        ByteBuf v1 = Unpooled.buffer();
        withTimestamps.encode(v1);
        assertThat(ListOffsets.Request.decode(v1, ListOffsets.VERSION_TIMESTAMPS)).isEqualTo(withTimestamps);
        assertThat(withTimestamps.searchesTimestamps()).isTrue();

        ListOffsets.Request ranges = ListOffsets.Request.ranges("t", List.of(0, 2));
        assertThat(ranges.searchesTimestamps()).isFalse();
        ByteBuf v0 = Unpooled.buffer();
        ranges.encode(v0, ListOffsets.VERSION_RANGE);
        assertThat(v0.readableBytes()).as("topic string, count and two int32").isEqualTo(2 + 1 + 4 + 2 * 4);
        assertThat(ListOffsets.Request.decode(v0, ListOffsets.VERSION_RANGE)).isEqualTo(ranges);
        assertThatThrownBy(() -> withTimestamps.encode(Unpooled.buffer(), ListOffsets.VERSION_RANGE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("version 0 carries no timestamp");

        ByteBuf r0 = Unpooled.buffer();
        new ListOffsets.Response(List.of(new ListOffsets.PartitionOffsets(3, 1, 9, 4))).encode(r0, ListOffsets.VERSION_RANGE);
        assertThat(r0.readableBytes()).isEqualTo(4 + 20);
        assertThat(ListOffsets.Response.decode(r0, ListOffsets.VERSION_RANGE).partitions())
                .as("a version-0 answer implies no timestamp: its timestamp offset is the start offset")
                .containsExactly(new ListOffsets.PartitionOffsets(3, 1, 9, 1));
    }

    @Test
    void everyApiIsListedByApiVersions() {
        ByteBuf b = Unpooled.buffer();
        ApiVersions.Response.current("x").encode(b);
        assertThat(ApiVersions.Response.decode(b).apis()).hasSize(ApiKey.values().length);
    }

    @Test
    void theProduceExampleInProtocolMdIsExactlyWhatTheCodecWrites() {
        ByteBuf b = Unpooled.buffer();
        int start = Frames.startRequest(b, ApiKey.PRODUCE, Produce.VERSION_BATCH, 1);
        Produce.encodeBatch(b, Acks.JOURNAL, "t", 0, out -> out.writeBytes(BatchMessagesTest.batch(0,
                List.of(new ProducerRecord("t", 0, null, "hi".getBytes(StandardCharsets.UTF_8), List.of(), 0L)))));
        Frames.finish(b, start);
        assertThat(io.netty.buffer.ByteBufUtil.hexDump(b)).isEqualTo(PRODUCE_EXAMPLE);
        ByteBuf r = Unpooled.buffer();
        int rs = Frames.startResponse(r, 1);
        new Produce.BatchResponse(41).encode(r);
        Frames.finish(r, rs);
        assertThat(io.netty.buffer.ByteBufUtil.hexDump(r)).isEqualTo("0000000e" + "00000001" + "0000" + "0000000000000029");
    }

    /** docs/PROTOCOL.md, "Example: one produce round trip". */
    private static final String PRODUCE_EXAMPLE = "0000005a" + "0003" + "0001" + "00000001" // frame: length, PRODUCE v1, id 1
            + "01" + "000174" + "00000000" + "00000046"                                   // JOURNAL, "t", partition 0, 70 bytes
            + "0000000000000000" + "0000003a" + "ffffffff" + "02" + "acc6b066"            // base offset, length, epoch, magic, crc
            + "0000" + "00000000" + "0000000000000000" + "0000000000000000"               // attributes, last delta, timestamps
            + "ffffffffffffffff" + "ffff" + "ffffffff" + "00000001"                       // producer id, epoch, sequence, count
            + "10" + "00" + "00" + "00" + "01" + "04" + "6869" + "00";                    // the record
}
