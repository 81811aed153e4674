package io.sluice.core.internal.group;

import io.sluice.core.ConsumerGroups;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 12, "wake, don't poll": an embedded member whose poll waits for data parks without a short heartbeat timer;
 * the coordinator wakes it when its group's rebalance starts (so it stops reading and rejoins) and when the
 * rebalance completes (so it learns its new partitions). The waiters here park with no timeout at all: only the
 * coordinator's wake-up can return them.
 */
class RebalanceWakeTest {
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final Set<TopicPartition> PARTITIONS = Set.of(new TopicPartition("t", 0), new TopicPartition("t", 1));

    @TempDir
    Path dir;

    @Test
    void aWaitingMemberIsWokenWhenItsGroupsRebalanceStartsAndWhenItCompletes() throws Exception {
        try (GroupCoordinator groups = new GroupCoordinator(dir, topic -> PARTITIONS, System::currentTimeMillis)) {
            ConsumerGroups.Membership a = groups.join("g", "t", null, ConsumerGroups.NO_GENERATION, "a", 60_000);
            assertThat(a.assignment()).isEqualTo(PARTITIONS);

            Waiter started = new Waiter(groups);
            groups.join("g", "t", null, ConsumerGroups.NO_GENERATION, "b", 60_000); // b joins: the rebalance starts
            started.assertWoken("the rebalance started");

            Waiter completed = new Waiter(groups);
            groups.join("g", "t", a.memberId(), a.generation(), "a", 60_000); // a rejoins: every member did
            completed.assertWoken("the rebalance completed");
        }
    }

    /** A thread registered with the group that parks, without a timeout, until it is unparked. */
    private static final class Waiter {
        private final CountDownLatch woken = new CountDownLatch(1);
        private final Thread thread;

        Waiter(GroupCoordinator groups) {
            thread = new Thread(() -> {
                LockSupport.park(this);
                woken.countDown();
            }, "rebalance-waiter");
            groups.wakeOnRebalance("g", thread);
            thread.start();
            Await.until("the waiter parked", DEADLINE, () -> thread.getState() == Thread.State.WAITING);
        }

        void assertWoken(String when) throws InterruptedException {
            assertThat(woken.await(DEADLINE.toSeconds(), TimeUnit.SECONDS)).as("waiter woken when " + when).isTrue();
        }
    }
}
