package io.sluice.bench.internal;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The baselines' {@link WakingWaitStrategy} (jmh-benchmarks) copies the spin and yield counts of Sluice's own
 * {@code WakeableIdleStrategy} (broker-core, package-private), so that a baseline ring waits as Sluice's stage threads
 * do. The copy lives outside the library since issue 21; this test fails when the two ladders drift apart.
 */
class WakingWaitStrategyLadderTest {

    @Test
    void baselineSpinsAndYieldsAsSluicesIdleStrategy() throws ReflectiveOperationException {
        Class<?> sluice = Class.forName("io.sluice.core.internal.bus.WakeableIdleStrategy");
        assertThat(WakingWaitStrategy.SPINS).isEqualTo(constant(sluice, "SPINS"));
        assertThat(WakingWaitStrategy.YIELDS).isEqualTo(constant(sluice, "YIELDS"));
    }

    private static int constant(Class<?> type, String name) throws ReflectiveOperationException {
        Field f = type.getDeclaredField(name);
        f.setAccessible(true);
        return f.getInt(null);
    }
}
