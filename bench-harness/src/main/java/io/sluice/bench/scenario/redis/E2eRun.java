package io.sluice.bench.scenario.redis;

import org.HdrHistogram.Histogram;

/**
 * One redis-e2e run.
 *
 * @param sent          envelopes published
 * @param received      distinct envelopes received by the group
 * @param duplicates    envelopes received more than once
 * @param latency       publish→receive latency from the actual send time (ns)
 * @param lateness      how far behind its schedule the load generator sent each message (ns)
 * @param nanos         from the first intended send to the last receive
 * @param cpuPercent    this JVM's CPU time over the run minus the load generator's, in % of one core (Redis excluded)
 * @param heapPeakMiB   the largest heap use sampled during the run (includes garbage not yet collected)
 * @param heapAfterMiB  heap in use after the run and a full GC
 */
record E2eRun(int sent, long received, long duplicates, Histogram latency, Histogram lateness, long nanos, double cpuPercent,
              double heapPeakMiB, double heapAfterMiB) {

    double lossPercent() {
        return 100.0 * (sent - received) / sent;
    }

    double perSecond() {
        return received * 1e9 / Math.max(1, nanos);
    }

    double millis(double nanosValue) {
        return nanosValue / 1e6;
    }
}
