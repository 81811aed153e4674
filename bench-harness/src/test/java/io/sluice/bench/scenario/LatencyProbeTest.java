package io.sluice.bench.scenario;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The event-bus runs check each event id arrived exactly once, not only that enough arrived. */
class LatencyProbeTest {

    @Test
    void aRunIsExactOnlyWhenEveryIdArrivedOnce() {
        LatencyProbe probe = new LatencyProbe(4, 2);
        probe.reset();
        long now = System.nanoTime();
        for (int id = 0; id < 3; id++) {
            probe.intended[id] = now;
        }
        probe.onEvent(0, 0);
        probe.onEvent(1, 1);
        probe.onEvent(0, 1);
        assertThatThrownBy(() -> probe.verifyExactly(3)).hasMessageContaining("event 1 arrived 2 times");
        probe.onEvent(1, 2);
        assertThatThrownBy(() -> probe.verifyExactly(3)).hasMessageContaining("received 4 events, sent 3");

        probe.reset();
        probe.onEvent(0, 0);
        probe.onEvent(1, 1);
        probe.onEvent(0, 2);
        probe.verifyExactly(3);
    }
}
