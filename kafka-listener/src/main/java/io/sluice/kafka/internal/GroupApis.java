package io.sluice.kafka.internal;

/**
 * The consumer-group rows of {@link KafkaApis}: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
 * OffsetCommit, OffsetFetch, ListGroups, DescribeGroups (the classic protocol over the core broker's groups).
 * Empty for now: without these rows the listener does not advertise the group APIs, and clients use assign().
 */
final class GroupApis {
    private GroupApis() {
    }

    static void register(KafkaApis.Builder table, ListenerContext context) {
        // e.g. table.add(ApiKeys.FIND_COORDINATOR, 0, 0, 6, false, new FindCoordinatorHandler(context));
    }
}
