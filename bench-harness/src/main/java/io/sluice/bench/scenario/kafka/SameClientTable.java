package io.sluice.bench.scenario.kafka;

import io.sluice.bench.report.Better;
import io.sluice.bench.report.Goal;
import io.sluice.bench.report.Numbers;
import io.sluice.bench.report.Row;
import io.sluice.bench.report.Table;
import io.sluice.bench.scenario.kafka.KafkaPeerScenario.Measured;

import java.util.List;
import java.util.Locale;

/**
 * The kafka-peer table measured with the same client on both sides (issue 23): Kafka's own {@code ProducerPerformance}
 * and {@code ConsumerPerformance} against Sluice's Kafka listener (the Sluice column) and against the private Kafka
 * broker (the peer column), in the same rounds as the Sluice-client tables, whose medians each row's note repeats.
 * The goals are data on the rows: produce ≥ 2× Kafka, consume ≥ 1.5× Kafka (Sluice's median against the
 * peer's median).
 */
final class SameClientTable {
    /** Issue 23: Sluice's listener takes Kafka's ProducerPerformance at least this many times Kafka's rate. */
    static final double PRODUCE_GOAL = 2.0;
    /** Issue 23: Sluice's listener serves Kafka's ConsumerPerformance at least this many times Kafka's rate. */
    static final double CONSUME_GOAL = 1.5;

    private SameClientTable() {
    }

    /**
     * @param produce       ProducerPerformance against Sluice's Kafka listener, one entry per measured round
     * @param kafkaProduce  ProducerPerformance against the Kafka broker, the same rounds
     * @param consume       ConsumerPerformance against Sluice's Kafka listener
     * @param kafkaConsume  ConsumerPerformance against the Kafka broker
     * @param sluiceProduce Sluice's perf-produce against Sluice's binary port, the same rounds (for the notes)
     * @param sluiceConsume Sluice's perf-consume, the same rounds (for the notes)
     */
    static Table build(long records, List<Measured> produce, List<Measured> kafkaProduce, List<Measured> consume,
                       List<Measured> kafkaConsume, List<Measured> sluiceProduce, List<Measured> sluiceConsume) {
        Table.Builder t = Table.builder(String.format(Locale.ROOT,
                        "Same client (Kafka's tools): %,d × %d B, %d partitions, Kafka %s ProducerPerformance (%s) and "
                                + "ConsumerPerformance against Sluice's Kafka listener (--kafka-port) and against Kafka",
                        records, KafkaPeerScenario.RECORD_SIZE, KafkaPeerScenario.PARTITIONS, KafkaPeerScenario.KAFKA_VERSION,
                        String.join(", ", KafkaPeerScenario.KAFKA_PRODUCE)),
                "Kafka " + KafkaPeerScenario.KAFKA_VERSION + " broker, same run, same tools");
        t.row(new Row("produce", "rec/s", Better.HIGHER, KafkaPeerScenario.sample(produce, Measured::perSecond),
                KafkaPeerScenario.sample(kafkaProduce, Measured::perSecond), null,
                KafkaPeerScenario.compare(produce, kafkaProduce, Measured::perSecond, Better.HIGHER)
                        + sluiceClient(sluiceProduce, Measured::perSecond, "perf-produce"))
                .withGoal(Goal.timesBaseline(PRODUCE_GOAL)));
        t.row(new Row("consume", "rec/s", Better.HIGHER, KafkaPeerScenario.sample(consume, Measured::perSecond),
                KafkaPeerScenario.sample(kafkaConsume, Measured::perSecond), null,
                KafkaPeerScenario.compare(consume, kafkaConsume, Measured::perSecond, Better.HIGHER)
                        + sluiceClient(sluiceConsume, Measured::perSecond, "perf-consume"))
                .withGoal(Goal.timesBaseline(CONSUME_GOAL)));
        t.row("broker CPU per M records, produce (user + sys)", "s per M records", Better.LOWER,
                KafkaPeerScenario.sample(produce, Measured::brokerCpuPerMillion),
                KafkaPeerScenario.sample(kafkaProduce, Measured::brokerCpuPerMillion), null,
                KafkaPeerScenario.compare(produce, kafkaProduce, Measured::brokerCpuPerMillion, Better.LOWER)
                        + sluiceClient(sluiceProduce, Measured::brokerCpuPerMillion, "perf-produce"));
        t.row("broker CPU per M records, consume (user + sys)", "s per M records", Better.LOWER,
                KafkaPeerScenario.sample(consume, Measured::brokerCpuPerMillion),
                KafkaPeerScenario.sample(kafkaConsume, Measured::brokerCpuPerMillion), null,
                KafkaPeerScenario.compare(consume, kafkaConsume, Measured::brokerCpuPerMillion, Better.LOWER)
                        + sluiceClient(sluiceConsume, Measured::brokerCpuPerMillion, "perf-consume"));
        return t.build();
    }

    /** "; Sluice's own client (perf-produce), same rounds: median" for a row's note. */
    private static String sluiceClient(List<Measured> runs, java.util.function.ToDoubleFunction<Measured> f, String tool) {
        return "; Sluice's own client (" + tool + ") on its binary port, same rounds: "
                + Numbers.format(KafkaPeerScenario.sample(runs, f).median());
    }
}
