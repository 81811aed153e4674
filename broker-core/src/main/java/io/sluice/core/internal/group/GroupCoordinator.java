package io.sluice.core.internal.group;

import io.sluice.core.ClassicGroups;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.EpochClock;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.NamedThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * Consumer-group membership with generations (Kafka's eager rebalance protocol) and committed offsets.
 *
 * <p>Membership changes and commits are rare next to events (a commit covers a whole poll), so one monitor guards
 * the state: simple, and never on the per-event path. A commit's fsync runs under it too (a few milliseconds,
 * against session timeouts of seconds).
 *
 * <p>States of a group: <b>stable</b> (every member holds its assignment of the current generation) and
 * <b>rebalancing</b> (a member joined, left or expired; the current generation's members keep their partitions
 * until they rejoin). The rebalance completes — generation + 1, range assignment over the members sorted by id —
 * when every member has rejoined since it started (a rejoin means "I stopped reading"), members that do not
 * rejoin being removed when their session expires. Sessions are checked on every call, with the injected clock, and
 * by a one-shot timer armed for the earliest session deadline (see {@link #armExpiryTimer}): a coordinator without
 * members arms no timer, so an idle broker's coordinator thread never wakes.
 *
 * <p>Kafka's classic groups (client-side assignment, {@link ClassicGroups}) run here too, in
 * {@link ClassicGroupCoordinator}, under the same monitor: one namespace of group ids (a group has members of one
 * kind at a time), one offset store, one generation counter per group.
 */
public final class GroupCoordinator implements ConsumerGroups, ClassicGroups, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);
    /**
     * The timer looks again at least this often while there are members, even when the earliest session deadline is
     * further away: the clock is injected, and one that jumps ahead (a test's manual clock, a corrected wall clock)
     * still expires sessions within this long.
     */
    static final long MAX_EXPIRY_CHECK_MILLIS = 1_000;

    private final OffsetStore store;
    private final Function<String, Set<TopicPartition>> partitionsOfTopic;
    private final EpochClock clock;
    private final Map<String, Group> groups = new HashMap<>();
    private final Map<String, Map<TopicPartition, Long>> committed;
    private final AtomicLong memberIds = new AtomicLong();
    private final ScheduledExecutorService timer;
    /** the armed expiry check and when it runs (System.nanoTime), or null when none is armed; guarded by this */
    private ScheduledFuture<?> expiryCheck;
    private long expiryCheckAtNanos;
    /** embedded members' polling threads to unpark when their group's rebalance starts or completes; guarded by this */
    private final Map<String, Set<Thread>> rebalanceWaiters = new HashMap<>();
    private final ClassicGroupCoordinator classic;

    /**
     * @param partitionsOfTopic the partitions of a topic; throws UnknownTopicException for an unknown topic
     */
    public GroupCoordinator(Path dir, Function<String, Set<TopicPartition>> partitionsOfTopic, EpochClock clock) {
        this(dir, partitionsOfTopic, clock, ClassicGroupLimits.DEFAULT);
    }

    public GroupCoordinator(Path dir, Function<String, Set<TopicPartition>> partitionsOfTopic, EpochClock clock,
                            ClassicGroupLimits classicLimits) {
        this.classic = new ClassicGroupCoordinator(this, classicLimits);
        this.store = new OffsetStore(dir);
        this.partitionsOfTopic = partitionsOfTopic;
        this.clock = clock;
        this.committed = store.loadAll();
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, new NamedThreadFactory("sluice-group-sessions"));
        t.setRemoveOnCancelPolicy(true); // a re-armed check leaves no cancelled task behind to wake the thread
        this.timer = t;
    }

    private static final class Group {
        final String topic;
        int generation;
        boolean rebalancing;
        final TreeMap<String, Member> members = new TreeMap<>();

        Group(String topic) {
            this.topic = topic;
        }
    }

    private static final class Member {
        final String clientId;
        long sessionTimeoutMillis;
        long lastSeenMillis;
        /** the generation of {@link #assignment}; NO_GENERATION before the member's first completed rebalance */
        int generation = NO_GENERATION;
        /** the generation last returned to the member: what it must present when it rejoins */
        int givenGeneration = NO_GENERATION;
        /** rejoined since the current rebalance started (so it stopped reading) */
        boolean rejoined;
        Set<TopicPartition> assignment = Set.of();

        Member(String clientId, long sessionTimeoutMillis, long now) {
            this.clientId = clientId;
            this.sessionTimeoutMillis = sessionTimeoutMillis;
            this.lastSeenMillis = now;
        }
    }

    @Override
    public synchronized Membership join(String groupId, String topic, String memberId, int generation, String clientId,
                                        long sessionTimeoutMillis) {
        partitionsOfTopic.apply(topic); // UnknownTopicException
        long now = clock.epochMillis();
        ClassicGroup kafkaGroup = classic.group(groupId);
        if (kafkaGroup != null) {
            classic.expire(groupId, kafkaGroup, now);
        }
        if (classic.has(groupId)) {
            throw SluiceException.InvalidConfigException.of("group '" + groupId + "'", "a Sluice member",
                    "must not join a group whose members are Kafka clients (" + classic.group(groupId).members.keySet() + ")");
        }
        Group group = groups.get(groupId);
        if (group != null) {
            expire(groupId, group, now);
            group = groups.get(groupId);
        }
        if (group != null && !group.topic.equals(topic)) {
            throw SluiceException.InvalidConfigException.of("group '" + groupId + "' topic", topic,
                    "must be the topic its members consume, '" + group.topic + "'");
        }
        Member member;
        String id;
        if (memberId == null) {
            if (group == null) {
                group = new Group(topic);
                group.generation = store.lastGeneration(groupId); // a group that comes back keeps counting up
                groups.put(groupId, group);
            }
            id = clientId + "-" + memberIds.incrementAndGet() + "-" + Long.toHexString(System.nanoTime());
            member = new Member(clientId, sessionTimeoutMillis, now);
            startRebalance(groupId, group, "member " + id + " joined");
            group.members.put(id, member);
            member.rejoined = true;
        } else {
            member = group == null ? null : group.members.get(memberId);
            if (member == null) {
                throw new SluiceException.UnknownMemberException("member '" + memberId + "' is not in group '" + groupId
                        + "' (expired or left): join with no member id");
            }
            if (generation != member.givenGeneration) {
                throw new SluiceException.FencedMemberException("member '" + memberId + "' of group '" + groupId
                        + "' was last given generation " + member.givenGeneration + ", not " + generation
                        + ": another incarnation uses this id; join with no member id");
            }
            id = memberId;
            member.lastSeenMillis = now;
            member.sessionTimeoutMillis = sessionTimeoutMillis;
            if (group.rebalancing) {
                member.rejoined = true;
            }
        }
        tryComplete(groupId, group);
        armExpiryTimer();
        return membership(groupId, id, group, member);
    }

    @Override
    public synchronized Membership heartbeat(String groupId, String memberId, int generation) {
        Group group = groups.get(groupId);
        long now = clock.epochMillis();
        if (group != null) {
            expire(groupId, group, now);
        }
        Member m = member(groupId, memberId);
        group = groups.get(groupId);
        if (group.rebalancing) {
            if (m.rejoined) {
                m.lastSeenMillis = now; // waiting for the others; it keeps calling join
            }
            throw new SluiceException.RebalanceInProgressException("group '" + groupId + "' is rebalancing (generation "
                    + group.generation + " ends): stop reading its partitions and rejoin");
        }
        if (generation != group.generation) {
            throw illegalGeneration(groupId, memberId, generation, group);
        }
        m.lastSeenMillis = now;
        return membership(groupId, memberId, group, m);
    }

    @Override
    public synchronized void leave(String groupId, String memberId) {
        Group group = groups.get(groupId);
        if (group != null && group.members.remove(memberId) != null) {
            if (group.members.isEmpty()) {
                dropEmpty(groupId);
            } else {
                startRebalance(groupId, group, "member " + memberId + " left");
                tryComplete(groupId, group);
            }
        }
    }

    @Override
    public synchronized void commit(String groupId, String memberId, int generation, Map<TopicPartition, Long> offsets) {
        if (offsets.isEmpty()) {
            return;
        }
        checkOwner(groupId, memberId, generation, offsets.keySet(), "commit");
        Map<TopicPartition, Long> current = committed.getOrDefault(groupId, Map.of());
        for (Map.Entry<TopicPartition, Long> e : offsets.entrySet()) {
            Long before = current.get(e.getKey());
            if (e.getValue() < 0) {
                throw SluiceException.InvalidConfigException.of("committed offset of " + e.getKey(), e.getValue(), "must be >= 0");
            }
            if (before != null && e.getValue() < before) {
                throw new SluiceException.OffsetRegressionException("group '" + groupId + "': commit of " + e.getKey() + " at "
                        + e.getValue() + " would move the committed offset back from " + before
                        + " (committed offsets only grow; resetOffsets moves them back on a group without members)");
            }
        }
        write(groupId, offsets);
    }

    @Override
    public synchronized OptionalLong committed(String groupId, String memberId, int generation, TopicPartition partition) {
        if (memberId != null) {
            checkOwner(groupId, memberId, generation, Set.of(partition), "offset fetch");
        }
        return committed(groupId, partition);
    }

    @Override
    public synchronized OptionalLong committed(String groupId, TopicPartition partition) {
        Long v = committed.getOrDefault(groupId, Map.of()).get(partition);
        return v == null ? OptionalLong.empty() : OptionalLong.of(v);
    }

    @Override
    public synchronized void resetOffsets(String groupId, Map<TopicPartition, Long> offsets) {
        Group group = groups.get(groupId);
        if (group != null) {
            expire(groupId, group, clock.epochMillis());
        }
        if (groups.containsKey(groupId)) {
            throw new SluiceException.NonEmptyGroupException("group '" + groupId + "' has members "
                    + groups.get(groupId).members.keySet() + ": stop them before resetting its offsets");
        }
        if (hasClassicMembers(groupId)) {
            throw new SluiceException.NonEmptyGroupException("group '" + groupId + "' has Kafka members "
                    + classic.group(groupId).members.keySet() + ": stop them before resetting its offsets");
        }
        for (Map.Entry<TopicPartition, Long> e : offsets.entrySet()) {
            if (e.getValue() < 0) {
                throw SluiceException.InvalidConfigException.of("reset offset of " + e.getKey(), e.getValue(), "must be >= 0");
            }
        }
        write(groupId, offsets);
        LOG.info("group '{}': offsets reset to {}", groupId, offsets);
    }

    private void write(String groupId, Map<TopicPartition, Long> offsets) {
        Map<TopicPartition, Long> next = new HashMap<>(committed.getOrDefault(groupId, Map.of()));
        next.putAll(offsets);
        store.store(groupId, next);
        committed.put(groupId, next);
    }

    /** The member exists, {@code generation} is current (or ending, during a rebalance) and it owns the partitions. */
    private void checkOwner(String groupId, String memberId, int generation, Set<TopicPartition> partitions, String what) {
        Group group = groups.get(groupId);
        if (group != null) {
            expire(groupId, group, clock.epochMillis());
            group = groups.get(groupId);
        }
        if (memberId == null) {
            if (group != null) {
                throw new SluiceException.IllegalGenerationException("group '" + groupId + "' has members "
                        + group.members.keySet() + ": a " + what + " without a member id and generation is refused");
            }
            if (hasClassicMembers(groupId)) {
                throw new SluiceException.IllegalGenerationException("group '" + groupId + "' has Kafka members "
                        + classic.group(groupId).members.keySet() + ": a " + what + " without a member id and generation is refused");
            }
            return;
        }
        Member m = member(groupId, memberId);
        if (generation != group.generation || m.generation != group.generation) {
            throw illegalGeneration(groupId, memberId, generation, group);
        }
        for (TopicPartition tp : partitions) {
            if (!m.assignment.contains(tp)) {
                throw new SluiceException.IllegalGenerationException("group '" + groupId + "': " + tp
                        + " is not assigned to member '" + memberId + "' in generation " + generation + " (" + what + " refused)");
            }
        }
    }

    private Member member(String groupId, String memberId) {
        Group group = groups.get(groupId);
        Member m = group == null ? null : group.members.get(memberId);
        if (m == null) {
            throw new SluiceException.UnknownMemberException("member '" + memberId + "' is not in group '" + groupId
                    + "' (expired or left): join with no member id");
        }
        return m;
    }

    private static SluiceException illegalGeneration(String groupId, String memberId, int generation, Group group) {
        return new SluiceException.IllegalGenerationException("group '" + groupId + "' is at generation " + group.generation
                + (group.rebalancing ? " (rebalancing)" : "") + ", member '" + memberId + "' presented " + generation + ": rejoin");
    }

    @Override
    public synchronized List<GroupDescription> describe() {
        List<GroupDescription> out = new ArrayList<>();
        Set<String> ids = new TreeSet<>(committed.keySet());
        ids.addAll(groups.keySet());
        ids.addAll(classic.groupIds());
        for (String id : ids) {
            ClassicGroup kafkaGroup = classic.group(id);
            if (kafkaGroup != null) {
                out.add(describeClassic(id, kafkaGroup, committed.get(id)));
                continue;
            }
            Group g = groups.get(id);
            Map<String, Set<TopicPartition>> members = new LinkedHashMap<>();
            if (g != null) {
                g.members.forEach((mid, m) -> members.put(mid, m.assignment));
            }
            int generation = g == null ? store.lastGeneration(id) : g.generation; // an empty group: its last one
            out.add(new GroupDescription(id, g == null ? null : g.topic, generation, members,
                    new TreeMap<>(committed.getOrDefault(id, Map.of()))));
        }
        return out;
    }

    @Override
    public synchronized List<String> listGroups() {
        long now = clock.epochMillis();
        Set<String> ids = new TreeSet<>(committed.keySet());
        for (Map.Entry<String, Group> e : new ArrayList<>(groups.entrySet())) {
            expire(e.getKey(), e.getValue(), now); // may drop the group from the map once empty
            if (!e.getValue().members.isEmpty()) {
                ids.add(e.getKey());
            }
        }
        classic.expireAll(now);
        ids.addAll(classic.groupIds());
        return new ArrayList<>(ids);
    }

    @Override
    public synchronized Optional<GroupDescription> describe(String groupId) {
        Group g = groups.get(groupId);
        Map<TopicPartition, Long> offsets = committed.get(groupId);
        ClassicGroup kafkaGroup = classic.group(groupId);
        if (kafkaGroup != null) {
            classic.expire(groupId, kafkaGroup, clock.epochMillis());
            if (classic.has(groupId)) {
                return Optional.of(describeClassic(groupId, kafkaGroup, offsets));
            }
        }
        if (g != null) {
            expire(groupId, g, clock.epochMillis());
        }
        if ((g == null || g.members.isEmpty()) && offsets == null) {
            return Optional.empty();
        }
        Map<String, Set<TopicPartition>> members = new LinkedHashMap<>();
        if (g != null) {
            g.members.forEach((mid, m) -> members.put(mid, m.assignment));
        }
        String topic = g != null && !g.members.isEmpty() ? g.topic
                : offsets == null || offsets.isEmpty() ? (g == null ? null : g.topic) : onlyTopic(offsets.keySet(), Set.of());
        return Optional.of(new GroupDescription(groupId, topic, g == null ? store.lastGeneration(groupId) : g.generation, members,
                new TreeMap<>(offsets == null ? Map.of() : offsets)));
    }

    /**
     * A Kafka group as Sluice's tools see it: the partitions per member decoded from the consumer protocol's
     * assignment bytes; the topic when the group reads one, else null (its lag rows then cover every topic it is
     * assigned or committed on).
     */
    private GroupDescription describeClassic(String groupId, ClassicGroup group, Map<TopicPartition, Long> offsets) {
        Map<String, Set<TopicPartition>> members = classic.assignedPartitions(group);
        Set<TopicPartition> assigned = new HashSet<>();
        members.values().forEach(assigned::addAll);
        Map<TopicPartition, Long> committedOffsets = new TreeMap<>(offsets == null ? Map.of() : offsets);
        return new GroupDescription(groupId, onlyTopic(committedOffsets.keySet(), assigned), group.generation, members,
                committedOffsets);
    }

    /** The one topic of these partitions, or null when they span several (or none). */
    private static String onlyTopic(Collection<TopicPartition> a, Collection<TopicPartition> b) {
        Set<String> topics = new TreeSet<>();
        a.forEach(tp -> topics.add(tp.topic()));
        b.forEach(tp -> topics.add(tp.topic()));
        return topics.size() == 1 ? topics.iterator().next() : null;
    }

    /** Forgets the offsets of a deleted topic. */
    public synchronized void topicDeleted(String topic) {
        for (Map.Entry<String, Map<TopicPartition, Long>> e : committed.entrySet()) {
            if (e.getValue().keySet().removeIf(tp -> tp.topic().equals(topic))) {
                store.store(e.getKey(), e.getValue());
            }
        }
        groups.values().removeIf(g -> g.topic.equals(topic));
    }

    /** Removes every member whose session expired (the timer calls this; tests with a manual clock may too). */
    public synchronized void expireSessions() {
        long now = clock.epochMillis();
        for (String groupId : new ArrayList<>(groups.keySet())) {
            Group g = groups.get(groupId);
            if (g != null) {
                expire(groupId, g, now);
            }
        }
        classic.expireAll(now);
    }

    /** The timer's task: expire what is due, then arm the next check if members remain. */
    private synchronized void expiryTimerFired() {
        expiryCheck = null;
        expireSessions();
        armExpiryTimer();
    }

    /**
     * Arms the one-shot expiry check for the earliest session deadline (at most {@link #MAX_EXPIRY_CHECK_MILLIS}
     * ahead), unless one is armed for no later; arms nothing when there are no members. Heartbeats only move deadlines
     * later, so they leave the armed check alone (it finds nothing due and re-arms); a join arms, since a rejoin may
     * shorten its member's session timeout. A member that leaves may leave one check that finds nothing and stops.
     */
    void armExpiryTimer() {
        long earliest = classic.earliestDeadline();
        for (Group g : groups.values()) {
            for (Member m : g.members.values()) {
                // expire() removes a member once now - lastSeen > timeout: due one millisecond after the timeout
                earliest = Math.min(earliest, m.lastSeenMillis + m.sessionTimeoutMillis + 1);
            }
        }
        if (earliest == Long.MAX_VALUE) {
            return;
        }
        long delayMillis = Math.max(0, Math.min(MAX_EXPIRY_CHECK_MILLIS, earliest - clock.epochMillis()));
        long at = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis);
        if (expiryCheck != null) {
            if (expiryCheckAtNanos - at <= 0) {
                return;
            }
            expiryCheck.cancel(false);
        }
        try {
            expiryCheck = timer.schedule(this::expiryTimerFired, delayMillis, TimeUnit.MILLISECONDS);
            expiryCheckAtNanos = at;
        } catch (RejectedExecutionException closed) {
            expiryCheck = null; // the coordinator is closed: sessions no longer matter
        }
    }

    private void expire(String groupId, Group group, long now) {
        List<String> expired = new ArrayList<>();
        group.members.forEach((id, m) -> {
            if (now - m.lastSeenMillis > m.sessionTimeoutMillis) {
                expired.add(id);
            }
        });
        if (expired.isEmpty()) {
            return;
        }
        expired.forEach(group.members::remove);
        LOG.info("group '{}': session of {} expired", groupId, expired);
        if (group.members.isEmpty()) {
            dropEmpty(groupId);
        } else {
            startRebalance(groupId, group, "sessions of " + expired + " expired");
            tryComplete(groupId, group);
        }
    }

    private void dropEmpty(String groupId) {
        groups.remove(groupId);
        LOG.debug("group '{}' has no members left: dropped (its committed offsets stay)", groupId);
    }

    private void startRebalance(String groupId, Group group, String why) {
        if (!group.rebalancing) {
            group.rebalancing = true;
            group.members.values().forEach(m -> m.rejoined = false);
            LOG.debug("group '{}': rebalance after generation {}: {}", groupId, group.generation, why);
            wakeWaiters(groupId);
        }
    }

    /**
     * {@code waiter} (an embedded member's polling thread) is unparked whenever a rebalance of {@code groupId} starts
     * or completes, until {@link #stopWakingOnRebalance}: a member waiting for data learns of the rebalance at once
     * instead of by heartbeating on a short timer. Register before the heartbeat that the wake-up should follow, so
     * that no change between that heartbeat and the park is missed.
     */
    public synchronized void wakeOnRebalance(String groupId, Thread waiter) {
        rebalanceWaiters.computeIfAbsent(groupId, g -> new HashSet<>()).add(waiter);
    }

    public synchronized void stopWakingOnRebalance(String groupId, Thread waiter) {
        Set<Thread> waiters = rebalanceWaiters.get(groupId);
        if (waiters != null && waiters.remove(waiter) && waiters.isEmpty()) {
            rebalanceWaiters.remove(groupId);
        }
    }

    private void wakeWaiters(String groupId) {
        Set<Thread> waiters = rebalanceWaiters.get(groupId);
        if (waiters != null) {
            waiters.forEach(LockSupport::unpark);
        }
    }

    /** Completes the rebalance once every member rejoined: the new generation's assignment. */
    private void tryComplete(String groupId, Group group) {
        if (!group.rebalancing || group.members.isEmpty()) {
            return;
        }
        for (Member m : group.members.values()) {
            if (!m.rejoined) {
                return;
            }
        }
        int nextGeneration = group.generation + 1;
        try {
            // durable before any member learns it: after a crash the broker counts on from here, never repeating it
            store.storeGeneration(groupId, nextGeneration, committed.getOrDefault(groupId, Map.of()));
        } catch (SluiceException e) {
            LOG.warn("group '{}': cannot store generation {}, the rebalance stays open until a rejoin retries it: {}",
                    groupId, nextGeneration, e.getMessage());
            return;
        }
        group.generation = nextGeneration;
        group.rebalancing = false;
        List<TopicPartition> sorted = new ArrayList<>(new TreeSet<>(partitionsOfTopic.apply(group.topic)));
        int n = group.members.size();
        int perMember = sorted.size() / n;
        int extra = sorted.size() % n;
        int next = 0;
        int i = 0;
        for (Member m : group.members.values()) {
            int count = perMember + (i < extra ? 1 : 0);
            m.assignment = Set.copyOf(sorted.subList(next, next + count));
            m.generation = group.generation;
            m.rejoined = false;
            next += count;
            i++;
        }
        LOG.debug("group '{}': generation {} with {} members", groupId, group.generation, n);
        wakeWaiters(groupId);
    }

    private static Membership membership(String groupId, String memberId, Group group, Member m) {
        if (group.rebalancing || m.generation != group.generation) {
            return new Membership(groupId, memberId, NO_GENERATION, Set.of());
        }
        m.givenGeneration = m.generation;
        return new Membership(groupId, memberId, m.generation, m.assignment);
    }

    // ------------------------------------------------------------------ ClassicGroups (Kafka's classic protocol)

    @Override
    public synchronized CompletableFuture<JoinResult> join(JoinRequest request) {
        return classic.join(request, clock.epochMillis());
    }

    @Override
    public synchronized CompletableFuture<SyncResult> sync(String groupId, int generation, String memberId,
                                                           String protocolType, String protocolName,
                                                           Map<String, byte[]> assignments) {
        return classic.sync(groupId, generation, memberId, protocolType, protocolName, assignments, clock.epochMillis());
    }

    @Override
    public synchronized ClassicGroups.Error heartbeat(String groupId, int generation, String memberId) {
        return classic.heartbeat(groupId, generation, memberId, clock.epochMillis());
    }

    @Override
    public synchronized List<ClassicGroups.Error> leave(String groupId, List<String> memberIds) {
        return classic.leave(groupId, memberIds, clock.epochMillis());
    }

    @Override
    public synchronized CommitResult commit(String groupId, int generation, String memberId, Map<TopicPartition, Long> offsets) {
        return classic.commit(groupId, generation, memberId, offsets, clock.epochMillis());
    }

    @Override
    public synchronized Map<TopicPartition, Long> committedOffsets(String groupId, Collection<TopicPartition> partitions) {
        return classic.committedOffsets(groupId, partitions);
    }

    @Override
    public synchronized List<Listing> groupListings() {
        List<Listing> out = new ArrayList<>();
        for (String id : listGroups()) {
            ClassicGroup g = classic.group(id);
            if (g != null) {
                out.add(new Listing(id, g.protocolType, g.state.kafkaName));
            } else if (groups.containsKey(id)) {
                out.add(new Listing(id, "sluice", "Stable"));
            } else {
                out.add(new Listing(id, "", "Empty"));
            }
        }
        return out;
    }

    @Override
    public synchronized Description describeGroup(String groupId) {
        Description d = classic.describe(groupId, clock.epochMillis());
        if (d != null) {
            return d;
        }
        Group g = groups.get(groupId);
        if (g != null) {
            expire(groupId, g, clock.epochMillis());
            g = groups.get(groupId);
        }
        if (g != null) {
            List<MemberDescription> members = new ArrayList<>();
            g.members.forEach((id, m) -> members.add(new MemberDescription(id, null, m.clientId, "", new byte[0], new byte[0])));
            return new Description(groupId, g.rebalancing ? "PreparingRebalance" : "Stable", "sluice", "range", members);
        }
        return new Description(groupId, committed.containsKey(groupId) ? "Empty" : "Dead", "", "", List.of());
    }

    // ------------------------------------------------------------------ shared with ClassicGroupCoordinator

    boolean hasNativeMembers(String groupId) {
        Group g = groups.get(groupId);
        if (g != null) {
            expire(groupId, g, clock.epochMillis());
        }
        return groups.containsKey(groupId);
    }

    private boolean hasClassicMembers(String groupId) {
        ClassicGroup g = classic.group(groupId);
        if (g != null) {
            classic.expire(groupId, g, clock.epochMillis());
        }
        return classic.has(groupId);
    }

    int lastGeneration(String groupId) {
        return store.lastGeneration(groupId);
    }

    void storeGeneration(String groupId, int generation) {
        store.storeGeneration(groupId, generation, committed.getOrDefault(groupId, Map.of()));
    }

    void writeOffsets(String groupId, Map<TopicPartition, Long> offsets) {
        write(groupId, offsets);
    }

    Map<TopicPartition, Long> committedOf(String groupId) {
        return committed.getOrDefault(groupId, Map.of());
    }

    boolean partitionExists(TopicPartition tp) {
        try {
            return partitionsOfTopic.apply(tp.topic()).contains(tp);
        } catch (SluiceException.UnknownTopicException unknown) {
            return false;
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
