package io.sluice.kafka.internal;

import io.sluice.core.ClassicGroups;
import org.apache.kafka.common.protocol.ApiKeys;

import java.util.concurrent.Executor;

/**
 * The consumer-group rows of {@link KafkaApis}: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
 * OffsetCommit, OffsetFetch, ListGroups, DescribeGroups — Kafka's classic group protocol, mapped onto the core
 * broker's {@link ClassicGroups} (one coordinator for Sluice's own groups and Kafka's: one offset store, one rule for
 * generations, so Kafka groups show in {@code sluice groups}, {@code /metrics} and {@code /ui}).
 *
 * <pre>
 *   API              advertised   decoded   why the ends
 *   FindCoordinator  0..6         0..6      v4+ batch keys
 *   JoinGroup        0..9         0..9      v4+ MEMBER_ID_REQUIRED handshake
 *   SyncGroup        0..5         0..5
 *   Heartbeat        0..4         0..4
 *   LeaveGroup       0..5         0..5      v3+ a batch of members
 *   OffsetCommit     0..9         2..9      v10 addresses topics by id; v0-1 removed by KIP-896
 *   OffsetFetch      0..9         1..9      v8+ several groups; v10 addresses topics by id
 *   ListGroups       0..5         0..5
 *   DescribeGroups   0..6         0..6
 * </pre>
 * Every range includes version 0: librdkafka enables its balanced consumer only when FindCoordinator, JoinGroup,
 * SyncGroup, Heartbeat and LeaveGroup do. The two whose v0/v1 kafka-clients no longer decodes advertise 0 anyway; no
 * client sends those versions (librdkafka picks the highest common one), and one that arrives closes the connection.
 *
 * <p>The coordinator takes one monitor and a commit fsyncs, so no group call runs on an event loop: each goes to the
 * listener's {@link ListenerContext#admin()} thread, and the long-polls (JoinGroup, SyncGroup) answer when their
 * future completes, on whichever thread completes it.
 */
final class GroupApis {
    private GroupApis() {
    }

    static void register(KafkaApis.Builder table, ListenerContext context) {
        ClassicGroups groups = context.broker().classicGroups();
        Executor calls = context.admin();
        table.add(ApiKeys.FIND_COORDINATOR, 0, 6, false, new FindCoordinatorHandler(context))
                .add(ApiKeys.JOIN_GROUP, 0, 9, false, new JoinGroupHandler(groups, calls))
                .add(ApiKeys.SYNC_GROUP, 0, 5, false, new SyncGroupHandler(groups, calls))
                .add(ApiKeys.HEARTBEAT, 0, 4, false, new HeartbeatHandler(groups, calls))
                .add(ApiKeys.LEAVE_GROUP, 0, 5, false, new LeaveGroupHandler(groups, calls))
                .add(ApiKeys.OFFSET_COMMIT, 0, 2, 9, false, new OffsetCommitHandler(groups, calls))
                .add(ApiKeys.OFFSET_FETCH, 0, 1, 9, false, new OffsetFetchHandler(groups, calls))
                .add(ApiKeys.LIST_GROUPS, 0, 5, false, new ListGroupsHandler(groups, calls))
                .add(ApiKeys.DESCRIBE_GROUPS, 0, 6, false, new DescribeGroupsHandler(groups, calls));
    }

    /** Runs {@code call} on the group thread; an exception there (or a refused task) answers the request with it. */
    static void offLoop(KafkaRequest request, Executor calls, Runnable call) {
        calls.execute(() -> {
            try {
                call.run();
            } catch (RuntimeException e) {
                request.fail(e);
            }
        });
    }
}
