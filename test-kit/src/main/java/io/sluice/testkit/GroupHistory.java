package io.sluice.testkit;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A history of what the members of one consumer group read (Jepsen-style: record every read, decide from the
 * history alone), for embedded and network consumers alike. Each poll that returned records is recorded as an
 * operation with its invocation and completion on one global counter (taken just before the poll and just after
 * it returned), member, generation, partition and offset range; {@link #check} then demands:
 * <ul>
 *   <li>within one generation, each partition was read by at most one member;</li>
 *   <li>per partition, generations never go back in real time: once a newer generation's owner completed a read of
 *       it, no older owner's read of it was invoked afterwards (the hand-over waits for the old owner to stop).
 *       A read is only known to happen somewhere between its invocation and its completion: a thread descheduled
 *       after its poll returned (a loaded machine) records late, so the order of recording proves nothing;</li>
 *   <li>every offset below the given end offsets was read at least once (at-least-once).</li>
 * </ul>
 */
public final class GroupHistory {
    /** One poll's records of one partition: {@code invoked < completed} on the history's counter. */
    public record Read(long invoked, long completed, String member, int generation, TopicPartition partition,
                       long firstOffset, long lastOffset) {
    }

    private final ConcurrentLinkedQueue<Read> reads = new ConcurrentLinkedQueue<>();
    private final AtomicLong order = new AtomicLong();

    /** Polls once, records what came back with the generation it was read in, then commits (a refusal is fine). */
    public int pollAndRecord(Consumer c, Duration timeout) {
        long invoked = order.incrementAndGet();
        List<ConsumerRecord> records = c.poll(timeout);
        long completed = order.incrementAndGet();
        if (records.isEmpty()) {
            return 0;
        }
        // no heartbeat runs between the reads of a poll and its return: this is the generation they were read in
        ConsumerGroups.Membership m = c.groupMembership().orElseThrow();
        Map<TopicPartition, long[]> ranges = new TreeMap<>();
        for (ConsumerRecord r : records) {
            ranges.merge(r.topicPartition(), new long[] {r.offset(), r.offset()},
                    (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])});
        }
        ranges.forEach((tp, range) -> reads.add(new Read(invoked, completed, m.memberId(), m.generation(), tp, range[0], range[1])));
        try {
            c.commitSync();
        } catch (SluiceException.GroupException refused) {
            // a newer generation owns the partitions: their next owner reads them again
        }
        return records.size();
    }

    /** @return the number of generations in which something was read */
    public int check(Map<TopicPartition, Long> endOffsets) {
        List<Read> history = new ArrayList<>(reads);
        history.sort((a, b) -> Long.compare(a.invoked(), b.invoked()));
        Map<Integer, Map<TopicPartition, Set<String>>> owners = new HashMap<>();
        Map<TopicPartition, List<Read>> byPartition = new HashMap<>();
        Map<TopicPartition, Set<Long>> readOffsets = new HashMap<>();
        for (Read r : history) {
            owners.computeIfAbsent(r.generation(), g -> new HashMap<>())
                    .computeIfAbsent(r.partition(), p -> new HashSet<>()).add(r.member());
            byPartition.computeIfAbsent(r.partition(), p -> new ArrayList<>()).add(r);
            Set<Long> seen = readOffsets.computeIfAbsent(r.partition(), p -> new HashSet<>());
            for (long o = r.firstOffset(); o <= r.lastOffset(); o++) {
                seen.add(o);
            }
        }
        // per partition, in invocation order: the newest generation among the reads completed before this one was
        // invoked must not be newer than this read's
        byPartition.forEach((tp, ops) -> {
            List<Read> byCompletion = new ArrayList<>(ops);
            byCompletion.sort((a, b) -> Long.compare(a.completed(), b.completed()));
            int done = 0;
            Read newestDone = null;
            for (Read r : ops) {
                while (done < byCompletion.size() && byCompletion.get(done).completed() < r.invoked()) {
                    Read d = byCompletion.get(done++);
                    if (newestDone == null || d.generation() > newestDone.generation()) {
                        newestDone = d;
                    }
                }
                if (newestDone != null) {
                    assertThat(r.generation()).as("generation of %s (%s completed before it was invoked)", r, newestDone)
                            .isGreaterThanOrEqualTo(newestDone.generation());
                }
            }
        });
        owners.forEach((generation, partitions) -> partitions.forEach((tp, members) ->
                assertThat(members).as("members that read %s in generation %d", tp, generation).hasSize(1)));
        endOffsets.forEach((tp, end) -> {
            Set<Long> seen = readOffsets.getOrDefault(tp, Set.of());
            for (long o = 0; o < end; o++) {
                assertThat(seen).as("offset %d of %s was read", o, tp).contains(o);
            }
        });
        return owners.size();
    }
}
