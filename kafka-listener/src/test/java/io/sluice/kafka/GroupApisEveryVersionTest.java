package io.sluice.kafka;

import io.sluice.core.TopicConfig;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every decoded version of every group API, on the wire with the generated classes: each answers without an error
 * (the group calls that need a member first join one, at JoinGroup v9). {@link EveryVersionTest} covers the other
 * rows; a response field set at a version that lacks it would fail here.
 */
class GroupApisEveryVersionTest {
    static final byte[] METADATA = "subscription".getBytes(StandardCharsets.UTF_8);
    static final byte[] ASSIGNMENT = "assignment".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    @Test
    void eachDecodedVersionOfEachGroupApiIsAnsweredWithoutAnError() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("t", 1));
            int port = kafka.listener.port();
            for (short v = 0; v <= 6; v++) {
                FindCoordinatorRequestData find = new FindCoordinatorRequestData().setKeyType((byte) 0);
                if (v < 4) {
                    find.setKey("g");
                } else {
                    find.setCoordinatorKeys(List.of("g"));
                }
                FindCoordinatorResponse r = (FindCoordinatorResponse) call(port, ApiKeys.FIND_COORDINATOR, v, find);
                assertThat(v < 4 ? r.data().port() : r.data().coordinators().get(0).port()).isEqualTo(port);
            }
            for (short v = 0; v <= 9; v++) {
                JoinGroupResponseData joined = join(port, "join-v" + v, v);
                assertThat(joined.generationId()).as("JoinGroup v" + v).isEqualTo(1);
                assertThat(joined.leader()).isEqualTo(joined.memberId());
                assertThat(joined.members()).extracting(JoinGroupResponseData.JoinGroupResponseMember::metadata).containsExactly(METADATA);
            }
            for (short v = 0; v <= 5; v++) {
                JoinGroupResponseData m = join(port, "sync-v" + v, (short) 9);
                SyncGroupRequestData sync = new SyncGroupRequestData().setGroupId("sync-v" + v).setGenerationId(m.generationId())
                        .setMemberId(m.memberId()).setAssignments(List.of(new SyncGroupRequestData.SyncGroupRequestAssignment()
                                .setMemberId(m.memberId()).setAssignment(ASSIGNMENT)));
                if (v >= 5) {
                    sync.setProtocolType("consumer").setProtocolName("range");
                }
                SyncGroupResponseData synced = ((SyncGroupResponse) call(port, ApiKeys.SYNC_GROUP, v, sync)).data();
                assertThat(synced.assignment()).as("SyncGroup v" + v).isEqualTo(ASSIGNMENT);
            }
            for (short v = 0; v <= 4; v++) {
                JoinGroupResponseData m = join(port, "hb-v" + v, (short) 9);
                call(port, ApiKeys.HEARTBEAT, v, new HeartbeatRequestData().setGroupId("hb-v" + v)
                        .setGenerationId(m.generationId()).setMemberId(m.memberId()));
            }
            for (short v = 0; v <= 5; v++) {
                JoinGroupResponseData m = join(port, "leave-v" + v, (short) 9);
                LeaveGroupRequestData leave = new LeaveGroupRequestData().setGroupId("leave-v" + v);
                if (v < 3) {
                    leave.setMemberId(m.memberId());
                } else {
                    leave.setMembers(List.of(new LeaveGroupRequestData.MemberIdentity().setMemberId(m.memberId())));
                }
                call(port, ApiKeys.LEAVE_GROUP, v, leave);
            }
            for (short v = 2; v <= 9; v++) {
                OffsetCommitRequestData commit = new OffsetCommitRequestData().setGroupId("simple").setGenerationIdOrMemberEpoch(-1)
                        .setMemberId("").setTopics(List.of(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("t")
                                .setPartitions(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                                        .setPartitionIndex(0).setCommittedOffset(v)))));
                call(port, ApiKeys.OFFSET_COMMIT, v, commit);
            }
            for (short v = 1; v <= 9; v++) {
                OffsetFetchRequestData fetch = new OffsetFetchRequestData();
                if (v < 8) {
                    fetch.setGroupId("simple").setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopic()
                            .setName("t").setPartitionIndexes(List.of(0))));
                } else {
                    fetch.setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("simple")
                            .setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("t")
                                    .setPartitionIndexes(List.of(0))))));
                }
                OffsetFetchResponse r = (OffsetFetchResponse) call(port, ApiKeys.OFFSET_FETCH, v, fetch);
                long committed = v < 8 ? r.data().topics().get(0).partitions().get(0).committedOffset()
                        : r.data().groups().get(0).topics().get(0).partitions().get(0).committedOffset();
                assertThat(committed).as("OffsetFetch v" + v).isEqualTo(9);
            }
            for (short v = 0; v <= 5; v++) {
                ListGroupsResponse r = (ListGroupsResponse) call(port, ApiKeys.LIST_GROUPS, v, new ListGroupsRequestData());
                assertThat(r.data().groups()).extracting(ListGroupsResponseData.ListedGroup::groupId).contains("simple", "join-v9");
            }
            for (short v = 0; v <= 6; v++) {
                DescribeGroupsResponse r = (DescribeGroupsResponse) call(port, ApiKeys.DESCRIBE_GROUPS, v,
                        new DescribeGroupsRequestData().setGroups(List.of("simple", "sync-v5")));
                assertThat(r.data().groups().get(0).groupState()).as("DescribeGroups v" + v).isEqualTo("Empty");
                assertThat(r.data().groups().get(1).groupState()).isEqualTo("Stable");
                assertThat(r.data().groups().get(1).members().get(0).memberAssignment()).isEqualTo(ASSIGNMENT);
            }
        }
    }

    /** A lone member joins {@code group} at {@code version} (answering v4+'s MEMBER_ID_REQUIRED): generation 1. */
    private static JoinGroupResponseData join(int port, String group, short version) throws Exception {
        JoinGroupRequestData join = new JoinGroupRequestData().setGroupId(group).setSessionTimeoutMs(30_000)
                .setMemberId("").setProtocolType("consumer");
        if (version >= 1) {
            join.setRebalanceTimeoutMs(30_000);
        }
        join.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(METADATA));
        try (KafkaWire wire = new KafkaWire(port)) {
            JoinGroupResponse r = (JoinGroupResponse) wire.call(ApiKeys.JOIN_GROUP, version, join);
            if (r.error() == Errors.MEMBER_ID_REQUIRED) {
                assertThat(version).isGreaterThanOrEqualTo((short) 4);
                r = (JoinGroupResponse) wire.call(ApiKeys.JOIN_GROUP, version, join.duplicate().setMemberId(r.data().memberId()));
            }
            assertThat(r.error()).as("JoinGroup v" + version + ": " + r.data()).isEqualTo(Errors.NONE);
            return r.data();
        }
    }

    private static AbstractResponse call(int port, ApiKeys api, short version, ApiMessage request) throws Exception {
        try (KafkaWire wire = new KafkaWire(port)) {
            AbstractResponse response = wire.call(api, version, request);
            assertThat(response.errorCounts().keySet()).as(api + " v" + version + ": " + response.data())
                    .allMatch(e -> e == Errors.NONE);
            return response;
        }
    }
}
