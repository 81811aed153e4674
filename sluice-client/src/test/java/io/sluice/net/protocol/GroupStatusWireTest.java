package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.core.GroupStatus;
import io.sluice.core.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** DESCRIBE_GROUP's answer: version 1 names each lag row's topic (a Kafka group reading several topics). */
class GroupStatusWireTest {
    final GroupStatus twoTopics = new GroupStatus("shop", null, 3,
            Map.of("m-1", Set.of(new TopicPartition("orders", 0), new TopicPartition("refunds", 0))),
            List.of(new GroupStatus.PartitionLag("orders", 0, 5, 0, 9, 4, "m-1"),
                    new GroupStatus.PartitionLag("refunds", 0, -1, 0, 2, 2, "m-1")));

    @Test
    void version1CarriesTheTopicOfEveryRow() {
        ByteBuf b = Unpooled.buffer();
        Admin.writeGroupStatus(b, twoTopics, (short) 1);

        assertThat(Admin.readGroupStatus(b)).isEqualTo(twoTopics);
    }

    @Test
    void version0KeepsItsLayoutForOlderClients() {
        ByteBuf v0 = Unpooled.buffer();
        ByteBuf v1 = Unpooled.buffer();
        Admin.writeGroupStatus(v0, twoTopics, (short) 0);
        Admin.writeGroupStatus(v1, twoTopics, (short) 1);

        ByteBuf topics = Unpooled.buffer();
        Wire.writeString(topics, "orders");
        Wire.writeString(topics, "refunds");
        assertThat(v1.readableBytes() - v0.readableBytes()).isEqualTo(topics.readableBytes());
    }
}
