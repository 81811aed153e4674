package io.sluice.net.metrics;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.NativeHistogramBuckets;
import io.sluice.core.Broker;
import io.sluice.core.BrokerMetrics;
import io.sluice.core.BrokerMetrics.PartitionStats;
import io.sluice.core.GroupAdmin;
import io.sluice.core.GroupStatus;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

/**
 * The core broker's series, read once per scrape: per partition counters and gauges, the two latency histograms, and
 * per consumer group and partition the committed offset and the lag.
 *
 * <p>Latencies are Prometheus histograms (classic buckets, plus native buckets for the protobuf format) and counters
 * by nature: {@code histogram_quantile(0.99, rate(sluice_publish_to_journal_seconds_bucket[5m]))} gives the P99 of the
 * last five minutes, so today's tail never hides behind last week's. An empty histogram is all zeros, never NaN.
 */
public final class BrokerCollector implements MultiCollector {
    /** Upper bounds in seconds: 10 µs to 10 s. */
    static final double[] BOUNDS = {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
            0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, Double.POSITIVE_INFINITY};
    /** Native histogram schema 3: bucket boundaries grow by 2^(1/8), about 9% apart. */
    static final int NATIVE_SCHEMA = 3;

    private final Broker broker;
    private final GroupAdmin groups;

    public BrokerCollector(Broker broker) {
        this.broker = broker;
        this.groups = new GroupAdmin(broker);
    }

    @Override
    public MetricSnapshots collect() {
        if (broker.isClosed()) {
            return MetricSnapshots.of();
        }
        BrokerMetrics m = broker.metrics();
        List<MetricSnapshot> out = new ArrayList<>();
        List<PartitionStats> ps = m.partitions();
        out.add(counter(ps, "sluice_published_events", "Events put on the partition ring.", PartitionStats::published));
        out.add(counter(ps, "sluice_journaled_events", "Events appended to the journal.", PartitionStats::journaled));
        out.add(counter(ps, "sluice_journaled_bytes", "Bytes appended to the journal.", PartitionStats::journaledBytes));
        out.add(counter(ps, "sluice_back_pressured", "Sends that found the partition ring full (each retry counts).", PartitionStats::backPressured));
        out.add(counter(ps, "sluice_journal_errors", "Failed journal appends (for example disk full).", PartitionStats::journalErrors));
        out.add(gauge(ps, "sluice_ring_capacity", "Slots of the partition ring.", PartitionStats::ringCapacity));
        out.add(gauge(ps, "sluice_ring_occupancy", "Ring slots holding events not yet consumed by the slowest handler.", PartitionStats::ringOccupancy));
        out.add(gauge(ps, "sluice_journal_lag_events", "Events published but not yet journaled (published - journaled).",
                p -> p.published() - p.journaled()));
        out.add(gauge(ps, "sluice_partition_start_offset", "First retained offset of the partition.", PartitionStats::startOffset));
        out.add(gauge(ps, "sluice_partition_end_offset", "Offset the next event of the partition will get.", PartitionStats::endOffset));
        out.add(histogram("sluice_publish_to_journal_seconds", "Latency from Producer.send to the journal append.", m.publishToJournal()));
        out.add(histogram("sluice_journal_to_subscriber_seconds", "Latency from the journal append to a live subscriber.", m.journalToSubscriber()));
        groups(out);
        return new MetricSnapshots(out);
    }

    private void groups(List<MetricSnapshot> out) {
        GaugeSnapshot.Builder committed = GaugeSnapshot.builder().name("sluice_group_committed_offset")
                .help("Committed next offset of a consumer group on a partition (-1: none committed).");
        GaugeSnapshot.Builder lag = GaugeSnapshot.builder().name("sluice_group_lag_events")
                .help("Events between a group's committed offset (or the start offset, if none) and the partition's end.");
        GaugeSnapshot.Builder members = GaugeSnapshot.builder().name("sluice_group_members")
                .help("Live members of a consumer group.");
        for (GroupStatus g : groups.describeAll()) {
            members.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(Labels.of("group", g.groupId()))
                    .value(g.members().size()).build());
            for (GroupStatus.PartitionLag p : g.partitions()) {
                String topic = p.topic() != null ? p.topic() : g.topic();
                if (topic == null) {
                    continue;
                }
                Labels labels = Labels.of("group", g.groupId(), "topic", topic, "partition", Integer.toString(p.partition()));
                committed.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(labels).value(p.committed()).build());
                lag.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(labels).value(p.lag()).build());
            }
        }
        out.add(committed.build());
        out.add(lag.build());
        out.add(members.build());
    }

    private static Labels labels(PartitionStats p) {
        return Labels.of("topic", p.topic(), "partition", Integer.toString(p.partition()));
    }

    private static CounterSnapshot counter(List<PartitionStats> ps, String name, String help, ToDoubleFunction<PartitionStats> value) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help);
        for (PartitionStats p : ps) {
            b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(labels(p)).value(value.applyAsDouble(p)).build());
        }
        return b.build();
    }

    private static GaugeSnapshot gauge(List<PartitionStats> ps, String name, String help, ToDoubleFunction<PartitionStats> value) {
        GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(help);
        for (PartitionStats p : ps) {
            b.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(labels(p)).value(value.applyAsDouble(p)).build());
        }
        return b.build();
    }

    /** A histogram snapshot of an HdrHistogram of nanoseconds (cumulative since the broker opened). */
    static HistogramSnapshot histogram(String name, String help, Histogram nanos) {
        long[] counts = new long[BOUNDS.length];
        double sum = 0;
        TreeMap<Integer, Long> nativeCounts = new TreeMap<>();
        long zero = 0;
        if (nanos != null && nanos.getTotalCount() > 0) {
            for (HistogramIterationValue v : nanos.recordedValues()) {
                long count = v.getCountAtValueIteratedTo();
                double seconds = nanos.highestEquivalentValue(v.getValueIteratedTo()) / 1e9;
                sum += count * (nanos.medianEquivalentValue(v.getValueIteratedTo()) / 1e9);
                int bucket = 0;
                while (seconds > BOUNDS[bucket]) {
                    bucket++;
                }
                counts[bucket] += count;
                if (v.getValueIteratedTo() == 0) {
                    zero += count;
                } else {
                    nativeCounts.merge(nativeIndex(seconds), count, Long::sum);
                }
            }
        }
        NativeHistogramBuckets.Builder nb = NativeHistogramBuckets.builder();
        nativeCounts.forEach(nb::bucket);
        HistogramSnapshot.HistogramDataPointSnapshot point = HistogramSnapshot.HistogramDataPointSnapshot.builder()
                .classicHistogramBuckets(ClassicHistogramBuckets.of(BOUNDS, counts))
                .nativeSchema(NATIVE_SCHEMA)
                .nativeZeroCount(zero)
                .nativeZeroThreshold(0)
                .nativeBucketsForPositiveValues(nb.build())
                .sum(sum)
                .build();
        return HistogramSnapshot.builder().name(name).help(help).dataPoint(point).build();
    }

    /** The native bucket of a value: bucket i holds (base^(i-1), base^i] with base = 2^(2^-schema). */
    static int nativeIndex(double value) {
        return (int) Math.ceil(Math.log(value) / Math.log(2) * (1 << NATIVE_SCHEMA));
    }
}
