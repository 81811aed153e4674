package io.sluice.cli;

import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.SluiceException;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.client.RemoteConsumer;
import org.HdrHistogram.Histogram;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code sluice perf-consume}: reads N records with one {@link RemoteConsumer} (all partitions from the first
 * retained offset, or as a group member) and reports throughput and the latency of each poll that returned
 * records. Stops on an error or after {@code --timeout-ms} without records, and still prints the final JSON line.
 */
@Command(name = "perf-consume", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Consume load: reads N records from the start of every partition (or as a member of group G), "
                + "then prints a summary and a final JSON line; latency is the duration of each poll that returned records. "
                + "The clock runs from the first poll (consumer built, partitions assigned) to the poll that returned the "
                + "last record, as Kafka's ConsumerPerformance (with --group, the join is inside it)."})
final class PerfConsumeCommand extends SubCommand {
    @Mixin
    ClientOptions clientOptions;
    @Option(names = "--topic", required = true, paramLabel = "T", description = "topic to read")
    String topic;
    @Option(names = "--records", required = true, paramLabel = "N", description = "records to read")
    long records;
    @Option(names = "--group", paramLabel = "G", description = "read as a member of group G")
    String group;
    @Option(names = "--timeout-ms", paramLabel = "MS", defaultValue = "10000", description = "stop when no record arrived for MS (default: ${DEFAULT-VALUE})")
    long timeoutMillis;
    @Option(names = "--max-poll-records", paramLabel = "K", defaultValue = "10000", description = "records per poll (default: ${DEFAULT-VALUE})")
    int maxPollRecords;
    @Option(names = "--max-poll-bytes", paramLabel = "B", defaultValue = "4194304", description = "bytes per poll (default: ${DEFAULT-VALUE})")
    int maxPollBytes;

    PerfConsumeCommand(PrintStream out, PrintStream err) {
        super(out, err);
    }

    @Override
    int execute() throws UsageException {
        check("--records", records, 1, Long.MAX_VALUE);
        check("--timeout-ms", timeoutMillis, 1, Long.MAX_VALUE);
        ClientConfig client = clientOptions.clientConfig("sluice-perf-consume");
        ConsumerConfig config;
        try {
            config = ConsumerConfig.builder().groupId(group).clientId("sluice-perf-consume").offsetReset(OffsetReset.EARLIEST)
                    .maxPollRecords((int) check("--max-poll-records", maxPollRecords, 1, 100_000))
                    .maxPollBytes((int) check("--max-poll-bytes", maxPollBytes, 1, 64 << 20))
                    .build();
        } catch (SluiceException e) {
            throw new UsageException(e.getMessage());
        }
        Histogram latency = new Histogram(TimeUnit.HOURS.toMicros(1), 3);
        LongAdder received = new LongAdder();
        LongAdder polls = new LongAdder();
        AtomicBoolean done = new AtomicBoolean();
        long bytes = 0;
        String error = null;
        long launched = System.nanoTime();
        long start = 0;
        long end = 0;
        Thread progress = Perf.progress(err, "polls", polls, "received", received, done);
        try (RemoteConsumer consumer = new RemoteConsumer(client, config)) {
            if (group != null) {
                consumer.subscribe(topic);
            } else {
                consumer.assign(ConsumeCommand.partitionsOf(client, topic));
            }
            // the clock, as Kafka's ConsumerPerformance: from here (consumer built, partitions assigned) to the poll that
            // returned the last record; construction, the metadata read, the commit and close() are left out
            start = System.nanoTime();
            long lastRecordNanos = start;
            while (received.sum() < records) {
                long before = System.nanoTime();
                List<ConsumerRecord> batch = consumer.poll(Duration.ofMillis(Math.min(500, timeoutMillis)));
                long now = System.nanoTime();
                polls.increment();
                if (batch.isEmpty()) {
                    if (TimeUnit.NANOSECONDS.toMillis(now - lastRecordNanos) >= timeoutMillis) {
                        error = "no records for " + timeoutMillis + " ms";
                        break;
                    }
                    continue;
                }
                lastRecordNanos = now;
                latency.recordValue((now - before) / 1_000);
                for (ConsumerRecord r : batch) {
                    bytes += r.value().length + (r.key() == null ? 0 : r.key().length);
                }
                received.add(batch.size());
            }
            end = lastRecordNanos;
            if (group != null && error == null) {
                consumer.commitSync();
            }
        } catch (SluiceException e) {
            error = e.getMessage();
        }
        double seconds = (start == 0 || end <= start ? System.nanoTime() - launched : end - start) / 1e9;
        done.set(true);
        progress.interrupt();
        PerfReport.print(out, "perf-consume", records, received.sum(), error == null ? 0 : 1, bytes, seconds, latency, error);
        return error == null ? SluiceCli.OK : SluiceCli.FAILED;
    }
}
