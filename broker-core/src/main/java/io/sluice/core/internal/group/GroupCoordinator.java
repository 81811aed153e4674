package io.sluice.core.internal.group;

import io.sluice.core.ConsumerGroups;
import io.sluice.core.EpochClock;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Consumer-group membership and committed offsets. Membership changes and commits are rare next to events
 * (a commit covers a whole poll), so one monitor guards the state: simple, and never on the per-event path.
 * Assignment is range-based over members sorted by id, recomputed whenever a member joins, leaves or expires.
 */
public final class GroupCoordinator implements ConsumerGroups {
    private final OffsetStore store;
    private final Function<String, Set<TopicPartition>> partitionsOfTopic;
    private final EpochClock clock;
    private final Map<String, Group> groups = new HashMap<>();
    private final Map<String, Map<TopicPartition, Long>> committed;
    private final AtomicLong memberIds = new AtomicLong();

    /**
     * @param partitionsOfTopic the partitions of a topic; throws UnknownTopicException for an unknown topic
     */
    public GroupCoordinator(Path dir, Function<String, Set<TopicPartition>> partitionsOfTopic, EpochClock clock) {
        this.store = new OffsetStore(dir);
        this.partitionsOfTopic = partitionsOfTopic;
        this.clock = clock;
        this.committed = store.loadAll();
    }

    private static final class Group {
        final String topic;
        int generation;
        final TreeMap<String, Member> members = new TreeMap<>();

        Group(String topic) {
            this.topic = topic;
        }
    }

    private static final class Member {
        final String clientId;
        final long sessionTimeoutMillis;
        long lastSeenMillis;
        Set<TopicPartition> assignment = Set.of();

        Member(String clientId, long sessionTimeoutMillis, long now) {
            this.clientId = clientId;
            this.sessionTimeoutMillis = sessionTimeoutMillis;
            this.lastSeenMillis = now;
        }
    }

    @Override
    public synchronized Membership join(String groupId, String topic, String memberId, String clientId, long sessionTimeoutMillis) {
        Set<TopicPartition> partitions = partitionsOfTopic.apply(topic);
        Group group = groups.computeIfAbsent(groupId, g -> new Group(topic));
        if (!group.topic.equals(topic)) {
            if (group.members.isEmpty()) {
                group = new Group(topic);
                groups.put(groupId, group);
            } else {
                throw SluiceException.InvalidConfigException.of("group '" + groupId + "' topic", topic,
                        "must be the topic its members consume, '" + group.topic + "'");
            }
        }
        long now = clock.epochMillis();
        expire(group, now);
        String id = memberId != null && group.members.containsKey(memberId) ? memberId
                : (memberId != null ? memberId : clientId + "-" + memberIds.incrementAndGet() + "-" + Long.toHexString(System.nanoTime()));
        Member existing = group.members.get(id);
        if (existing == null) {
            group.members.put(id, new Member(clientId, sessionTimeoutMillis, now));
            rebalance(group, partitions);
        } else {
            existing.lastSeenMillis = now;
        }
        return membership(groupId, id, group);
    }

    @Override
    public synchronized Membership heartbeat(String groupId, String memberId) {
        Group group = groups.get(groupId);
        long now = clock.epochMillis();
        if (group != null) {
            expire(group, now);
        }
        Member m = group == null ? null : group.members.get(memberId);
        if (m == null) {
            throw new SluiceException(SluiceException.Code.UNKNOWN_MEMBER,
                    "member '" + memberId + "' is not in group '" + groupId + "' (expired or left): rejoin");
        }
        m.lastSeenMillis = now;
        return membership(groupId, memberId, group);
    }

    @Override
    public synchronized void leave(String groupId, String memberId) {
        Group group = groups.get(groupId);
        if (group != null && group.members.remove(memberId) != null) {
            rebalance(group, partitionsOfTopic.apply(group.topic));
        }
    }

    @Override
    public synchronized void commit(String groupId, Map<TopicPartition, Long> offsets) {
        if (offsets.isEmpty()) {
            return;
        }
        Map<TopicPartition, Long> current = new HashMap<>(committed.getOrDefault(groupId, Map.of()));
        current.putAll(offsets);
        store.store(groupId, current);
        committed.put(groupId, current);
    }

    @Override
    public synchronized OptionalLong committed(String groupId, TopicPartition partition) {
        Long v = committed.getOrDefault(groupId, Map.of()).get(partition);
        return v == null ? OptionalLong.empty() : OptionalLong.of(v);
    }

    @Override
    public synchronized List<GroupDescription> describe() {
        List<GroupDescription> out = new ArrayList<>();
        Set<String> ids = new TreeSet<>(committed.keySet());
        ids.addAll(groups.keySet());
        long now = clock.epochMillis();
        for (String id : ids) {
            Group g = groups.get(id);
            Map<String, Set<TopicPartition>> members = new LinkedHashMap<>();
            if (g != null) {
                expire(g, now);
                g.members.forEach((mid, m) -> members.put(mid, m.assignment));
            }
            out.add(new GroupDescription(id, g == null ? null : g.topic, g == null ? 0 : g.generation, members,
                    new TreeMap<>(committed.getOrDefault(id, Map.of()))));
        }
        return out;
    }

    @Override
    public synchronized List<String> listGroups() {
        long now = clock.epochMillis();
        Set<String> ids = new TreeSet<>(committed.keySet());
        for (Map.Entry<String, Group> e : groups.entrySet()) {
            expire(e.getValue(), now);
            if (!e.getValue().members.isEmpty()) {
                ids.add(e.getKey());
            }
        }
        return new ArrayList<>(ids);
    }

    @Override
    public synchronized Optional<GroupDescription> describe(String groupId) {
        Group g = groups.get(groupId);
        Map<TopicPartition, Long> offsets = committed.get(groupId);
        if (g != null) {
            expire(g, clock.epochMillis());
        }
        if ((g == null || g.members.isEmpty()) && offsets == null) {
            return Optional.empty();
        }
        Map<String, Set<TopicPartition>> members = new LinkedHashMap<>();
        if (g != null) {
            g.members.forEach((mid, m) -> members.put(mid, m.assignment));
        }
        String topic = g != null && !g.members.isEmpty() ? g.topic
                : offsets == null || offsets.isEmpty() ? (g == null ? null : g.topic) : new TreeMap<>(offsets).firstKey().topic();
        return Optional.of(new GroupDescription(groupId, topic, g == null ? 0 : g.generation, members,
                new TreeMap<>(offsets == null ? Map.of() : offsets)));
    }

    @Override
    public synchronized void resetOffsets(String groupId, Map<TopicPartition, Long> offsets) {
        Group g = groups.get(groupId);
        if (g != null) {
            expire(g, clock.epochMillis());
            if (!g.members.isEmpty()) {
                throw new SluiceException.GroupNotEmptyException("group '" + groupId + "' has " + g.members.size()
                        + " live member(s) " + g.members.keySet() + ": stop its consumers (or wait for their session timeout) before resetting offsets");
            }
        }
        for (Map.Entry<TopicPartition, Long> e : offsets.entrySet()) {
            if (e.getValue() < 0) {
                throw SluiceException.InvalidConfigException.of("offset of " + e.getKey(), e.getValue(), "must be >= 0");
            }
        }
        if (offsets.isEmpty()) {
            return;
        }
        Map<TopicPartition, Long> current = new HashMap<>(committed.getOrDefault(groupId, Map.of()));
        current.putAll(offsets);
        store.store(groupId, current);
        committed.put(groupId, current);
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

    private void expire(Group group, long now) {
        boolean removed = group.members.values().removeIf(m -> now - m.lastSeenMillis > m.sessionTimeoutMillis);
        if (removed) {
            rebalance(group, partitionsOfTopic.apply(group.topic));
        }
    }

    private static void rebalance(Group group, Set<TopicPartition> partitions) {
        group.generation++;
        List<TopicPartition> sorted = new ArrayList<>(new TreeSet<>(partitions));
        int n = group.members.size();
        if (n == 0) {
            return;
        }
        int i = 0;
        int perMember = sorted.size() / n;
        int extra = sorted.size() % n;
        int next = 0;
        for (Member m : group.members.values()) {
            int count = perMember + (i < extra ? 1 : 0);
            m.assignment = Set.copyOf(sorted.subList(next, next + count));
            next += count;
            i++;
        }
    }

    private static Membership membership(String groupId, String memberId, Group group) {
        return new Membership(groupId, memberId, group.generation, group.members.get(memberId).assignment);
    }
}
