package io.sluice.core.internal.client;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.journal.JournalProgress;
import io.sluice.core.internal.journal.JournalReader;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded consumer: one {@link JournalReader} per assigned partition, read round-robin. Group membership
 * is refreshed by a heartbeat on every poll. When the group rebalances (the heartbeat answers
 * {@code REBALANCE_IN_PROGRESS}) the consumer drops every partition without committing — their uncommitted events go
 * to the next owner: at-least-once — and rejoins; until the new generation starts it reads nothing.
 */
public final class LocalConsumer implements Consumer {
    private static final Logger LOG = LoggerFactory.getLogger(LocalConsumer.class);

    /** What the consumer needs from the broker. */
    public interface Journals {
        JournalReader openReader(TopicPartition partition);

        long startOffset(TopicPartition partition);

        long endOffset(TopicPartition partition);

        /** Signalled by the partition's journal writer after each batch: a waiting poll parks on it. */
        JournalProgress progress(TopicPartition partition);

        /** Unparks {@code waiter} whenever a rebalance of the group starts or completes, until {@link #stopWakingOnRebalance}. */
        void wakeOnRebalance(String groupId, Thread waiter);

        void stopWakingOnRebalance(String groupId, Thread waiter);

        Set<TopicPartition> partitionsOf(String topic);

        ConsumerGroups groups();

        boolean isClosed();
    }

    /**
     * While a poll waits for data the group hears from it at least this often (and once at every poll and after every
     * wake-up). A rebalance does not wait for it: the coordinator wakes the waiting poll
     * ({@link Journals#wakeOnRebalance}).
     */
    private static final long MAX_HEARTBEAT_INTERVAL_NANOS = 1_000_000_000L;

    private final Journals journals;
    private final ConsumerConfig config;
    private final Map<TopicPartition, JournalReader> readers = new LinkedHashMap<>();
    private String topic;
    private String memberId;
    /** the generation of the current assignment (last given by the group) */
    private int generation = ConsumerGroups.NO_GENERATION;
    /** joined, waiting for the rebalance to complete */
    private boolean pending;
    private long skippedByRetention;
    private int nextReader;
    private boolean closed;

    public LocalConsumer(Journals journals, ConsumerConfig config) {
        this.journals = journals;
        this.config = config;
    }

    @Override
    public void assign(Set<TopicPartition> partitions) {
        ensureOpen();
        if (memberId != null) {
            throw new IllegalStateException("consumer is subscribed to '" + topic + "' through group '" + config.groupId() + "'");
        }
        setAssignment(partitions);
    }

    @Override
    public void subscribe(String topic) {
        ensureOpen();
        if (config.groupId() == null) {
            setAssignment(journals.partitionsOf(topic));
            this.topic = topic;
            return;
        }
        this.topic = topic;
        apply(journals.groups().join(config.groupId(), topic, null, ConsumerGroups.NO_GENERATION, config.clientId(),
                config.sessionTimeoutMillis()));
    }

    private void apply(ConsumerGroups.Membership m) {
        memberId = m.memberId();
        pending = m.pending();
        if (pending) {
            setAssignment(Set.of());
        } else if (m.generation() != generation || !m.assignment().equals(readers.keySet())) {
            generation = m.generation();
            try {
                setAssignment(m.assignment());
            } catch (SluiceException.UnknownMemberException | SluiceException.FencedMemberException expired) {
                // the session ran out between the join and the committed-offset lookups (this thread was descheduled
                // longer than session.timeout.ms, as on a loaded machine): read nothing, and join again at the next
                // poll, as after a heartbeat refused for expiry, instead of failing subscribe() or poll()
                LOG.info("group '{}': {} while taking {}; joining again at the next poll", config.groupId(),
                        expired.getMessage(), m.assignment());
                setAssignment(Set.of());
                generation = ConsumerGroups.NO_GENERATION;
                pending = true;
            }
        }
    }

    private void setAssignment(Set<TopicPartition> partitions) {
        readers.entrySet().removeIf(e -> {
            if (!partitions.contains(e.getKey())) {
                e.getValue().close();
                return true;
            }
            return false;
        });
        for (TopicPartition tp : new TreeSet<>(partitions)) {
            if (!readers.containsKey(tp)) {
                JournalReader reader = journals.openReader(tp);
                readers.put(tp, reader);
                initialPosition(tp, reader);
            }
        }
        nextReader = 0;
    }

    private void initialPosition(TopicPartition tp, JournalReader reader) {
        if (config.groupId() != null) {
            OptionalLong committed = journals.groups().committed(config.groupId(), memberId, generation, tp);
            if (committed.isPresent()) {
                long c = committed.getAsLong();
                long start = journals.startOffset(tp);
                long end = journals.endOffset(tp);
                if (c >= start && c <= end) {
                    reader.seek(c);
                    return;
                }
                if (c < start) {
                    reset(tp, reader, c, "committed offset " + c + " was removed by retention (first retained: " + start + ")");
                    return;
                }
                reset(tp, reader, -1, "committed offset " + c + " is past the end " + end);
                return;
            }
        }
        reset(tp, reader, -1, "no committed offset");
    }

    /**
     * Applies {@link ConsumerConfig#offsetReset()}; never silently: {@code NONE} throws, the others log and count the
     * offsets that retention removed before they were read ({@link #skippedByRetention()}).
     *
     * @param from the position that could not be read (-1: nothing was lost, e.g. no committed offset yet)
     */
    private void reset(TopicPartition tp, JournalReader reader, long from, String why) {
        OffsetReset policy = config.offsetReset();
        long to = switch (policy) {
            case EARLIEST -> journals.startOffset(tp);
            case LATEST -> journals.endOffset(tp);
            default -> throw new SluiceException.OffsetOutOfRangeException(tp + ": " + why + " and offsetReset=NONE");
        };
        reader.seek(to);
        if (from >= 0) {
            long skipped = Math.max(0, Math.min(to, journals.startOffset(tp)) - from);
            skippedByRetention += skipped;
            LOG.warn("{}: {}; offsetReset={} moves to {}: {} offsets were never read", tp, why, policy, to, skipped);
        }
    }

    @Override
    public long skippedByRetention() {
        return skippedByRetention;
    }

    @Override
    public java.util.Optional<ConsumerGroups.Membership> groupMembership() {
        return memberId == null || pending ? java.util.Optional.empty()
                : java.util.Optional.of(new ConsumerGroups.Membership(config.groupId(), memberId, generation, assignment()));
    }

    @Override
    public Set<TopicPartition> assignment() {
        return Set.copyOf(readers.keySet());
    }

    @Override
    public void seek(TopicPartition partition, long offset) {
        reader(partition).seek(offset);
    }

    @Override
    public void seekToBeginning(Set<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            reader(tp).seek(journals.startOffset(tp));
        }
    }

    @Override
    public void seekToEnd(Set<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            reader(tp).seek(journals.endOffset(tp));
        }
    }

    @Override
    public void seekToTimestamp(TopicPartition partition, long epochMillis) {
        JournalReader r = reader(partition);
        r.seek(r.offsetForTimestamp(epochMillis));
    }

    @Override
    public long position(TopicPartition partition) {
        return reader(partition).position();
    }

    private JournalReader reader(TopicPartition tp) {
        ensureOpen();
        JournalReader r = readers.get(tp);
        if (r == null) {
            throw new IllegalStateException(tp + " is not assigned to this consumer (assignment: " + readers.keySet() + ")");
        }
        return r;
    }

    @Override
    public List<ConsumerRecord> poll(Duration timeout) {
        ensureOpen();
        long deadline = System.nanoTime() + timeout.toNanos();
        Thread me = Thread.currentThread();
        String group = memberId != null ? config.groupId() : null;
        if (group != null) {
            // before the first heartbeat: a rebalance that starts or completes after it wakes the park below
            journals.wakeOnRebalance(group, me);
        }
        try {
            long lastHeartbeat = 0;
            List<ConsumerRecord> out = new ArrayList<>();
            while (true) {
                long now = System.nanoTime();
                if (memberId != null && (lastHeartbeat == 0 || now - lastHeartbeat >= heartbeatIntervalNanos())) {
                    heartbeat();
                    lastHeartbeat = now;
                }
                readAvailable(out);
                if (!out.isEmpty() || System.nanoTime() >= deadline) {
                    return out;
                }
                if (journals.isClosed()) {
                    throw new SluiceException.ClosedException("broker is closed");
                }
                // Wait to be woken by a journal writer or by the group (a rebalance), not on a polling timer: the
                // only timers are the poll's own deadline and, in a group, the heartbeat that keeps the session
                // alive. Register, re-check, then park (no lost wake-up).
                long wait = deadline - System.nanoTime();
                if (memberId != null) {
                    wait = Math.min(wait, heartbeatIntervalNanos() - (System.nanoTime() - lastHeartbeat));
                }
                List<JournalProgress> watched = new ArrayList<>(readers.size());
                for (TopicPartition tp : readers.keySet()) {
                    JournalProgress p = journals.progress(tp);
                    p.register(me);
                    watched.add(p);
                }
                try {
                    readAvailable(out);
                    if (!out.isEmpty()) {
                        return out;
                    }
                    if (wait > 0) {
                        LockSupport.parkNanos(this, wait);
                    }
                    readAvailable(out); // woken by an append: deliver without a heartbeat first
                    if (!out.isEmpty()) {
                        return out;
                    }
                } finally {
                    for (JournalProgress p : watched) {
                        p.unregister(me);
                    }
                }
                lastHeartbeat = 0; // woken by the group (or the timer, or spuriously): the heartbeat tells what changed
            }
        } finally {
            if (group != null) {
                journals.stopWakingOnRebalance(group, me);
            }
        }
    }

    /** While a poll waits: a third of the session timeout, at most a second (as the network consumer heartbeats). */
    private long heartbeatIntervalNanos() {
        return Math.max(1_000_000L, Math.min(MAX_HEARTBEAT_INTERVAL_NANOS, config.sessionTimeoutMillis() * 1_000_000L / 3));
    }

    /** Heartbeat, or rejoin while a rebalance is pending; a refused heartbeat drops every partition first. */
    private void heartbeat() {
        ConsumerGroups groups = journals.groups();
        try {
            if (pending) {
                apply(groups.join(config.groupId(), topic, memberId, generation, config.clientId(), config.sessionTimeoutMillis()));
            } else {
                apply(groups.heartbeat(config.groupId(), memberId, generation));
            }
        } catch (SluiceException.RebalanceInProgressException | SluiceException.IllegalGenerationException e) {
            LOG.debug("group '{}': {}; revoking {} and rejoining", config.groupId(), e.getMessage(), readers.keySet());
            setAssignment(Set.of());
            try {
                apply(groups.join(config.groupId(), topic, memberId, generation, config.clientId(), config.sessionTimeoutMillis()));
            } catch (SluiceException.UnknownMemberException | SluiceException.FencedMemberException expired) {
                joinAsNewMember(expired);
            }
        } catch (SluiceException.UnknownMemberException | SluiceException.FencedMemberException e) {
            joinAsNewMember(e);
        }
    }

    /** Our session expired (we did not poll in time) or the id is taken: join as a new member. */
    private void joinAsNewMember(SluiceException why) {
        LOG.info("group '{}': {}; joining as a new member", config.groupId(), why.getMessage());
        setAssignment(Set.of());
        memberId = null;
        generation = ConsumerGroups.NO_GENERATION;
        apply(journals.groups().join(config.groupId(), topic, null, ConsumerGroups.NO_GENERATION, config.clientId(),
                config.sessionTimeoutMillis()));
    }

    private void readAvailable(List<ConsumerRecord> out) {
        if (readers.isEmpty()) {
            return;
        }
        JournalReader[] all = readers.values().toArray(new JournalReader[0]);
        int budgetRecords = config.maxPollRecords();
        int[] bytes = {0};
        for (int i = 0; i < all.length && out.size() < budgetRecords && bytes[0] < config.maxPollBytes(); i++) {
            JournalReader r = all[(nextReader + i) % all.length];
            try {
                r.read(budgetRecords - out.size(), config.maxPollBytes() - bytes[0], rec -> {
                    out.add(rec);
                    bytes[0] += rec.value().length;
                });
            } catch (SluiceException.OffsetOutOfRangeException e) {
                // retention removed what we were about to read
                reset(r.partition(), r, r.position(), e.getMessage());
            }
        }
        nextReader = (nextReader + 1) % all.length;
    }

    @Override
    public void commitSync() {
        Map<TopicPartition, Long> offsets = new HashMap<>();
        readers.forEach((tp, r) -> offsets.put(tp, r.position()));
        commitSync(offsets);
    }

    @Override
    public void commitSync(Map<TopicPartition, Long> offsets) {
        ensureOpen();
        if (config.groupId() == null) {
            throw new IllegalStateException("commit needs a groupId in the ConsumerConfig");
        }
        journals.groups().commit(config.groupId(), memberId, memberId == null ? ConsumerGroups.NO_GENERATION : generation, offsets);
    }

    @Override
    public OptionalLong committed(TopicPartition partition) {
        if (config.groupId() == null) {
            return OptionalLong.empty();
        }
        return journals.groups().committed(config.groupId(), partition);
    }

    private void ensureOpen() {
        if (closed) {
            throw new SluiceException.ClosedException("consumer is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        readers.values().forEach(JournalReader::close);
        readers.clear();
        if (memberId != null && !journals.isClosed()) {
            journals.groups().leave(config.groupId(), memberId);
        }
    }
}
