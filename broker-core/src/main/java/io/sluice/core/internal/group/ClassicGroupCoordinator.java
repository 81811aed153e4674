package io.sluice.core.internal.group;

import io.sluice.core.ClassicGroups;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.group.ClassicGroup.Member;
import io.sluice.core.internal.group.ClassicGroup.State;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Kafka's classic group protocol over the {@link GroupCoordinator}'s store and generations: the state machine of
 * {@link ClassicGroups}. Every method runs under the owner coordinator's monitor — the one lock of all group state,
 * taken per group call, never on the per-event path — so native and classic groups see one namespace and one offset
 * store. Deadlines (sessions, rebalance and sync timeouts) are checked on every call with the injected clock and by
 * the owner's expiry timer ({@link #earliestDeadline}, {@link #expire}).
 */
final class ClassicGroupCoordinator {
    private static final Logger LOG = LoggerFactory.getLogger(ClassicGroupCoordinator.class);

    private final GroupCoordinator owner;
    private final ClassicGroupLimits limits;
    private final Map<String, ClassicGroup> groups = new HashMap<>();

    ClassicGroupCoordinator(GroupCoordinator owner, ClassicGroupLimits limits) {
        this.owner = owner;
        this.limits = limits;
    }

    boolean has(String groupId) {
        return groups.containsKey(groupId);
    }

    ClassicGroup group(String groupId) {
        return groups.get(groupId);
    }

    Set<String> groupIds() {
        return groups.keySet();
    }

    // ------------------------------------------------------------------ JoinGroup

    CompletableFuture<ClassicGroups.JoinResult> join(ClassicGroups.JoinRequest r, long now) {
        String groupId = r.groupId();
        String memberId = r.memberId() == null ? "" : r.memberId();
        if (groupId == null || groupId.isEmpty()) {
            return failedJoin(ClassicGroups.Error.INVALID_GROUP_ID, memberId);
        }
        if (r.sessionTimeoutMillis() < limits.minSessionTimeoutMillis() || r.sessionTimeoutMillis() > limits.maxSessionTimeoutMillis()) {
            return failedJoin(ClassicGroups.Error.INVALID_SESSION_TIMEOUT, memberId);
        }
        if (owner.hasNativeMembers(groupId)) {
            return failedJoin(ClassicGroups.Error.INCONSISTENT_GROUP_PROTOCOL, memberId); // Sluice members use this id
        }
        ClassicGroup group = groups.get(groupId);
        if (group != null) {
            expire(groupId, group, now);
            group = groups.get(groupId);
        }
        if (memberId.isEmpty() || (group != null && group.pendingMembers.containsKey(memberId))) {
            return joinNew(r, memberId, group, now);
        }
        Member m = group == null ? null : group.members.get(memberId);
        if (m == null) {
            return failedJoin(ClassicGroups.Error.UNKNOWN_MEMBER_ID, memberId);
        }
        if (!group.protocolType.equals(r.protocolType()) || !supportedByOthers(group, m, r.protocols())) {
            return failedJoin(ClassicGroups.Error.INCONSISTENT_GROUP_PROTOCOL, memberId);
        }
        m.lastSeenMillis = now;
        m.sessionTimeoutMillis = r.sessionTimeoutMillis();
        m.rebalanceTimeoutMillis = r.rebalanceTimeoutMillis();
        CompletableFuture<ClassicGroups.JoinResult> f = new CompletableFuture<>();
        switch (group.state) {
            case PREPARING_REBALANCE -> {
                m.protocols = List.copyOf(r.protocols());
                await(m, f);
                tryCompleteJoin(groupId, group, now);
            }
            case COMPLETING_REBALANCE, STABLE -> {
                if (m.sameProtocols(r.protocols()) && (group.state == State.COMPLETING_REBALANCE || !m.id.equals(group.leaderId))) {
                    // a retried join of this generation (its answer was lost): the same answer again
                    f.complete(joinResult(group, m));
                } else {
                    // the leader rejoins to reassign (topics changed), or the member's subscription changed
                    m.protocols = List.copyOf(r.protocols());
                    startRebalance(groupId, group, now, "member " + m.id + " rejoined with new metadata");
                    await(m, f);
                    tryCompleteJoin(groupId, group, now);
                }
            }
        }
        owner.armExpiryTimer();
        return f;
    }

    private CompletableFuture<ClassicGroups.JoinResult> joinNew(ClassicGroups.JoinRequest r, String pendingId,
                                                               ClassicGroup group, long now) {
        String groupId = r.groupId();
        if (r.protocolType() == null || r.protocolType().isEmpty() || r.protocols().isEmpty()
                || (group != null && !group.supports(r.protocolType(), r.protocols()))) {
            return failedJoin(ClassicGroups.Error.INCONSISTENT_GROUP_PROTOCOL, pendingId);
        }
        if (group == null && groups.size() >= limits.maxGroups()) {
            return failedJoin(ClassicGroups.Error.COORDINATOR_NOT_AVAILABLE, pendingId); // bounded: no more groups here
        }
        if (group != null && pendingId.isEmpty() && group.members.size() + group.pendingMembers.size() >= limits.maxMembersPerGroup()) {
            return failedJoin(ClassicGroups.Error.GROUP_MAX_SIZE_REACHED, pendingId);
        }
        if (group == null) {
            group = new ClassicGroup(r.protocolType(), owner.lastGeneration(groupId));
            groups.put(groupId, group);
        }
        if (pendingId.isEmpty() && r.requireKnownMemberId()) {
            String id = newMemberId(r.clientId());
            group.pendingMembers.put(id, now + r.sessionTimeoutMillis());
            owner.armExpiryTimer();
            return failedJoin(ClassicGroups.Error.MEMBER_ID_REQUIRED, id);
        }
        String id = pendingId.isEmpty() ? newMemberId(r.clientId()) : pendingId;
        group.pendingMembers.remove(id);
        Member m = new Member(id, r, now);
        if (group.state != State.PREPARING_REBALANCE) {
            startRebalance(groupId, group, now, "member " + id + " joined");
        }
        group.members.put(id, m);
        group.deadlineMillis = Math.max(group.deadlineMillis == Long.MAX_VALUE ? 0 : group.deadlineMillis,
                now + r.rebalanceTimeoutMillis());
        CompletableFuture<ClassicGroups.JoinResult> f = new CompletableFuture<>();
        await(m, f);
        tryCompleteJoin(groupId, group, now);
        owner.armExpiryTimer();
        return f;
    }

    private static boolean supportedByOthers(ClassicGroup group, Member m, List<ClassicGroups.Protocol> protocols) {
        for (Member other : group.members.values()) {
            if (other == m) {
                continue;
            }
            boolean shared = false;
            for (ClassicGroups.Protocol p : protocols) {
                for (ClassicGroups.Protocol q : other.protocols) {
                    shared |= p.name().equals(q.name());
                }
            }
            if (!shared) {
                return false;
            }
        }
        return !protocols.isEmpty();
    }

    private static void await(Member m, CompletableFuture<ClassicGroups.JoinResult> f) {
        if (m.awaitingJoin != null) {
            // the member re-sent its join (a client retry after a lost connection): only the newest waits
            m.awaitingJoin.complete(ClassicGroups.JoinResult.failed(ClassicGroups.Error.REBALANCE_IN_PROGRESS, m.id));
        }
        m.awaitingJoin = f;
    }

    private String newMemberId(String clientId) {
        return (clientId == null || clientId.isEmpty() ? "member" : clientId) + "-" + UUID.randomUUID();
    }

    private static CompletableFuture<ClassicGroups.JoinResult> failedJoin(ClassicGroups.Error e, String memberId) {
        return CompletableFuture.completedFuture(ClassicGroups.JoinResult.failed(e, memberId));
    }

    private static ClassicGroups.JoinResult joinResult(ClassicGroup group, Member m) {
        List<ClassicGroups.MemberMetadata> members = new ArrayList<>();
        if (m.id.equals(group.leaderId)) {
            for (Member each : group.members.values()) {
                members.add(new ClassicGroups.MemberMetadata(each.id, each.groupInstanceId, each.metadata(group.protocolName)));
            }
        }
        return new ClassicGroups.JoinResult(ClassicGroups.Error.NONE, group.generation, group.protocolType,
                group.protocolName, group.leaderId, m.id, members);
    }

    /** Every member must rejoin within the rebalance timeout; a pending sync learns it must rejoin too. */
    private void startRebalance(String groupId, ClassicGroup group, long now, String why) {
        if (group.state == State.PREPARING_REBALANCE) {
            return;
        }
        for (Member m : group.members.values()) {
            if (m.awaitingSync != null) {
                m.awaitingSync.complete(ClassicGroups.SyncResult.failed(ClassicGroups.Error.REBALANCE_IN_PROGRESS));
                m.awaitingSync = null;
                m.lastSeenMillis = now;
            }
        }
        group.state = State.PREPARING_REBALANCE;
        group.deadlineMillis = now + group.maxRebalanceTimeoutMillis();
        LOG.debug("group '{}': rebalance after generation {}: {}", groupId, group.generation, why);
    }

    /**
     * Completes the join phase once every member rejoined (or, at the deadline, without those that did not): the next
     * generation, stored durably before any member learns it; the leader gets every member's metadata.
     */
    private void tryCompleteJoin(String groupId, ClassicGroup group, long now) {
        if (group.state != State.PREPARING_REBALANCE) {
            return;
        }
        boolean deadlinePassed = now >= group.deadlineMillis;
        if (!group.allJoined() && !deadlinePassed) {
            return;
        }
        if (deadlinePassed) {
            group.pendingMembers.clear();
            List<String> silent = new ArrayList<>();
            group.members.values().forEach(m -> {
                if (m.awaitingJoin == null) {
                    silent.add(m.id);
                }
            });
            if (!silent.isEmpty()) {
                LOG.info("group '{}': {} did not rejoin within the rebalance timeout: removed", groupId, silent);
                silent.forEach(group.members::remove);
            }
        }
        if (group.members.isEmpty()) {
            drop(groupId);
            return;
        }
        int next = Math.max(group.generation, owner.lastGeneration(groupId)) + 1;
        try {
            owner.storeGeneration(groupId, next);
        } catch (SluiceException e) {
            LOG.warn("group '{}': cannot store generation {}: the members rejoin: {}", groupId, next, e.getMessage());
            for (Member m : group.members.values()) {
                CompletableFuture<ClassicGroups.JoinResult> f = m.awaitingJoin;
                m.awaitingJoin = null;
                m.lastSeenMillis = now;
                f.complete(ClassicGroups.JoinResult.failed(ClassicGroups.Error.COORDINATOR_NOT_AVAILABLE, m.id));
            }
            return;
        }
        group.generation = next;
        group.protocolName = group.selectProtocol();
        if (group.leaderId == null || !group.members.containsKey(group.leaderId)) {
            group.leaderId = group.members.keySet().iterator().next();
        }
        group.state = State.COMPLETING_REBALANCE;
        group.deadlineMillis = now + group.maxRebalanceTimeoutMillis();
        LOG.debug("group '{}': generation {} with {} members, protocol {}, leader {}", groupId, next,
                group.members.size(), group.protocolName, group.leaderId);
        for (Member m : group.members.values()) {
            m.assignment = new byte[0];
            CompletableFuture<ClassicGroups.JoinResult> f = m.awaitingJoin;
            m.awaitingJoin = null;
            m.lastSeenMillis = now;
            f.complete(joinResult(group, m));
        }
    }

    // ------------------------------------------------------------------ SyncGroup

    CompletableFuture<ClassicGroups.SyncResult> sync(String groupId, int generation, String memberId, String protocolType,
                                                    String protocolName, Map<String, byte[]> assignments, long now) {
        ClassicGroup group = groups.get(groupId);
        if (group != null) {
            expire(groupId, group, now);
            group = groups.get(groupId);
        }
        Member m = group == null ? null : group.members.get(memberId);
        if (m == null) {
            return CompletableFuture.completedFuture(ClassicGroups.SyncResult.failed(ClassicGroups.Error.UNKNOWN_MEMBER_ID));
        }
        if (generation != group.generation) {
            return CompletableFuture.completedFuture(ClassicGroups.SyncResult.failed(ClassicGroups.Error.ILLEGAL_GENERATION));
        }
        if ((protocolType != null && !protocolType.equals(group.protocolType))
                || (protocolName != null && !protocolName.equals(group.protocolName))) {
            return CompletableFuture.completedFuture(ClassicGroups.SyncResult.failed(ClassicGroups.Error.INCONSISTENT_GROUP_PROTOCOL));
        }
        m.lastSeenMillis = now;
        switch (group.state) {
            case PREPARING_REBALANCE -> {
                return CompletableFuture.completedFuture(ClassicGroups.SyncResult.failed(ClassicGroups.Error.REBALANCE_IN_PROGRESS));
            }
            case STABLE -> {
                return CompletableFuture.completedFuture(syncResult(group, m));
            }
            default -> {
                CompletableFuture<ClassicGroups.SyncResult> f = new CompletableFuture<>();
                if (m.awaitingSync != null) {
                    m.awaitingSync.complete(ClassicGroups.SyncResult.failed(ClassicGroups.Error.REBALANCE_IN_PROGRESS));
                }
                m.awaitingSync = f;
                if (memberId.equals(group.leaderId)) {
                    for (Member each : group.members.values()) {
                        byte[] a = assignments.get(each.id);
                        each.assignment = a == null ? new byte[0] : a;
                    }
                    group.state = State.STABLE;
                    group.deadlineMillis = Long.MAX_VALUE;
                    for (Member each : group.members.values()) {
                        if (each.awaitingSync != null) {
                            CompletableFuture<ClassicGroups.SyncResult> waiting = each.awaitingSync;
                            each.awaitingSync = null;
                            each.lastSeenMillis = now;
                            waiting.complete(syncResult(group, each));
                        }
                    }
                    LOG.debug("group '{}': generation {} stable", groupId, group.generation);
                }
                owner.armExpiryTimer();
                return f;
            }
        }
    }

    private static ClassicGroups.SyncResult syncResult(ClassicGroup group, Member m) {
        return new ClassicGroups.SyncResult(ClassicGroups.Error.NONE, group.protocolType, group.protocolName, m.assignment);
    }

    // ------------------------------------------------------------------ Heartbeat, LeaveGroup

    ClassicGroups.Error heartbeat(String groupId, int generation, String memberId, long now) {
        ClassicGroup group = groups.get(groupId);
        if (group != null) {
            expire(groupId, group, now);
            group = groups.get(groupId);
        }
        Member m = group == null ? null : group.members.get(memberId);
        if (m == null) {
            return ClassicGroups.Error.UNKNOWN_MEMBER_ID;
        }
        if (generation != group.generation) {
            return ClassicGroups.Error.ILLEGAL_GENERATION;
        }
        m.lastSeenMillis = now;
        return group.state == State.PREPARING_REBALANCE ? ClassicGroups.Error.REBALANCE_IN_PROGRESS : ClassicGroups.Error.NONE;
    }

    List<ClassicGroups.Error> leave(String groupId, List<String> memberIds, long now) {
        ClassicGroup group = groups.get(groupId);
        if (group != null) {
            expire(groupId, group, now);
        }
        List<ClassicGroups.Error> out = new ArrayList<>();
        for (String id : memberIds) {
            group = groups.get(groupId);
            if (group == null || !group.members.containsKey(id)) {
                out.add(ClassicGroups.Error.UNKNOWN_MEMBER_ID);
                continue;
            }
            remove(groupId, group, List.of(id), now, "member " + id + " left");
            out.add(ClassicGroups.Error.NONE);
        }
        return out;
    }

    /** Removes members (left, expired, or silent past a deadline) and rebalances the others. */
    private void remove(String groupId, ClassicGroup group, List<String> ids, long now, String why) {
        for (String id : ids) {
            Member m = group.members.remove(id);
            if (m == null) {
                continue;
            }
            if (m.awaitingJoin != null) {
                m.awaitingJoin.complete(ClassicGroups.JoinResult.failed(ClassicGroups.Error.UNKNOWN_MEMBER_ID, id));
            }
            if (m.awaitingSync != null) {
                m.awaitingSync.complete(ClassicGroups.SyncResult.failed(ClassicGroups.Error.UNKNOWN_MEMBER_ID));
            }
        }
        if (group.members.isEmpty() && group.pendingMembers.isEmpty()) {
            drop(groupId);
            return;
        }
        startRebalance(groupId, group, now, why);
        tryCompleteJoin(groupId, group, now);
    }

    private void drop(String groupId) {
        groups.remove(groupId);
        LOG.debug("group '{}' has no members left: dropped (its committed offsets and generation stay)", groupId);
    }

    // ------------------------------------------------------------------ deadlines

    /** The earliest moment a session, a pending member id, or a rebalance/sync deadline falls due (epoch millis). */
    long earliestDeadline() {
        long earliest = Long.MAX_VALUE;
        for (ClassicGroup g : groups.values()) {
            earliest = Math.min(earliest, g.deadlineMillis);
            for (Member m : g.members.values()) {
                if (!m.inRequest()) {
                    earliest = Math.min(earliest, m.lastSeenMillis + m.sessionTimeoutMillis + 1);
                }
            }
            for (long until : g.pendingMembers.values()) {
                earliest = Math.min(earliest, until + 1);
            }
        }
        return earliest;
    }

    void expireAll(long now) {
        for (String groupId : new ArrayList<>(groups.keySet())) {
            ClassicGroup g = groups.get(groupId);
            if (g != null) {
                expire(groupId, g, now);
            }
        }
    }

    /**
     * Sessions: a member silent longer than its session timeout (and not waiting in a join or sync) is removed.
     * Deadlines: the join phase completes without the members that did not rejoin; the sync phase, when the leader
     * did not send the assignment in time, removes the members that did not sync and rebalances the others.
     */
    void expire(String groupId, ClassicGroup group, long now) {
        group.pendingMembers.values().removeIf(until -> now > until);
        List<String> expired = new ArrayList<>();
        for (Member m : group.members.values()) {
            if (!m.inRequest() && now - m.lastSeenMillis > m.sessionTimeoutMillis) {
                expired.add(m.id);
            }
        }
        if (!expired.isEmpty()) {
            LOG.info("group '{}': session of {} expired", groupId, expired);
            remove(groupId, group, expired, now, "sessions of " + expired + " expired");
            if (groups.get(groupId) != group) {
                return;
            }
        }
        if (group.state == State.COMPLETING_REBALANCE && now >= group.deadlineMillis) {
            List<String> unsynced = new ArrayList<>();
            group.members.values().forEach(m -> {
                if (m.awaitingSync == null) {
                    unsynced.add(m.id);
                }
            });
            LOG.info("group '{}': no assignment from leader {} within the rebalance timeout; {} did not sync: removed",
                    groupId, group.leaderId, unsynced);
            if (unsynced.isEmpty()) {
                startRebalance(groupId, group, now, "no assignment in time");
            } else {
                remove(groupId, group, unsynced, now, "no assignment in time");
            }
        } else if (group.state == State.PREPARING_REBALANCE) {
            tryCompleteJoin(groupId, group, now);
        } else if (group.members.isEmpty() && group.pendingMembers.isEmpty()) {
            drop(groupId);
        }
    }

    // ------------------------------------------------------------------ offsets

    ClassicGroups.CommitResult commit(String groupId, int generation, String memberId, Map<TopicPartition, Long> offsets, long now) {
        ClassicGroups.Error e = validateCommit(groupId, generation, memberId == null ? "" : memberId, now);
        Map<TopicPartition, ClassicGroups.Error> errors = new LinkedHashMap<>();
        if (e != ClassicGroups.Error.NONE) {
            offsets.keySet().forEach(tp -> errors.put(tp, e));
            return new ClassicGroups.CommitResult(e, errors);
        }
        Map<TopicPartition, Long> valid = new HashMap<>();
        for (Map.Entry<TopicPartition, Long> o : offsets.entrySet()) {
            TopicPartition tp = o.getKey();
            ClassicGroups.Error pe = ClassicGroups.Error.NONE;
            if (!owner.partitionExists(tp)) {
                pe = ClassicGroups.Error.UNKNOWN_TOPIC_OR_PARTITION;
            } else if (o.getValue() < 0) {
                pe = ClassicGroups.Error.OFFSET_OUT_OF_RANGE;
            } else {
                valid.put(tp, o.getValue());
            }
            errors.put(tp, pe);
        }
        if (!valid.isEmpty()) {
            try {
                owner.writeOffsets(groupId, valid); // a member may move an offset back: it seeked
            } catch (SluiceException failed) {
                LOG.warn("group '{}': commit failed: {}", groupId, failed.getMessage());
                valid.keySet().forEach(tp -> errors.put(tp, ClassicGroups.Error.COORDINATOR_NOT_AVAILABLE));
            }
        }
        return new ClassicGroups.CommitResult(ClassicGroups.Error.NONE, errors);
    }

    /** Kafka's rules: a member of the current generation, or (-1, "") while the group has no members. */
    private ClassicGroups.Error validateCommit(String groupId, int generation, String memberId, long now) {
        ClassicGroup group = groups.get(groupId);
        if (group != null) {
            expire(groupId, group, now);
            group = groups.get(groupId);
        }
        if (owner.hasNativeMembers(groupId)) {
            return ClassicGroups.Error.UNKNOWN_MEMBER_ID; // Sluice's own members hold this group
        }
        if (group == null || group.members.isEmpty()) {
            return generation < 0 && memberId.isEmpty() ? ClassicGroups.Error.NONE
                    : memberId.isEmpty() ? ClassicGroups.Error.ILLEGAL_GENERATION : ClassicGroups.Error.UNKNOWN_MEMBER_ID;
        }
        Member m = group.members.get(memberId);
        if (m == null) {
            return ClassicGroups.Error.UNKNOWN_MEMBER_ID;
        }
        if (generation != group.generation) {
            return ClassicGroups.Error.ILLEGAL_GENERATION;
        }
        if (group.state == State.COMPLETING_REBALANCE) {
            return ClassicGroups.Error.REBALANCE_IN_PROGRESS;
        }
        m.lastSeenMillis = now;
        return ClassicGroups.Error.NONE;
    }

    // ------------------------------------------------------------------ list, describe

    ClassicGroups.Description describe(String groupId, long now) {
        ClassicGroup group = groups.get(groupId);
        if (group != null) {
            expire(groupId, group, now);
            group = groups.get(groupId);
        }
        if (group == null) {
            return null;
        }
        List<ClassicGroups.MemberDescription> members = new ArrayList<>();
        for (Member m : group.members.values()) {
            members.add(new ClassicGroups.MemberDescription(m.id, m.groupInstanceId, m.clientId, m.clientHost,
                    group.protocolName == null ? new byte[0] : m.metadata(group.protocolName),
                    group.state == State.STABLE ? m.assignment : new byte[0]));
        }
        return new ClassicGroups.Description(groupId, group.state.kafkaName, group.protocolType,
                group.state == State.STABLE ? group.protocolName : "", members);
    }

    /**
     * The partitions per member, decoded from the consumer protocol's assignment bytes (protocol type "consumer"),
     * for Sluice's describe and lag views; an assignment of another protocol type, or one that does not decode,
     * shows no partitions.
     */
    Map<String, Set<TopicPartition>> assignedPartitions(ClassicGroup group) {
        Map<String, Set<TopicPartition>> out = new LinkedHashMap<>();
        for (Member m : group.members.values()) {
            out.put(m.id, "consumer".equals(group.protocolType) ? ConsumerProtocolAssignment.partitions(m.assignment)
                    : Set.of());
        }
        return out;
    }

    Map<TopicPartition, Long> committedOffsets(String groupId, Collection<TopicPartition> partitions) {
        Map<TopicPartition, Long> committed = owner.committedOf(groupId);
        Map<TopicPartition, Long> out = new TreeMap<>();
        if (partitions == null) {
            out.putAll(committed);
        } else {
            for (TopicPartition tp : partitions) {
                out.put(tp, committed.getOrDefault(tp, -1L));
            }
        }
        return out;
    }

    static Set<String> topicsOf(Map<String, Set<TopicPartition>> assignments) {
        Set<String> topics = new TreeSet<>();
        assignments.values().forEach(s -> s.forEach(tp -> topics.add(tp.topic())));
        return topics;
    }
}
