package io.sluice.cli;

import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicDescription;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.client.RemoteAdmin;
import io.sluice.net.client.RemoteConsumer;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** {@code sluice consume}: prints one event payload per stdout line. */
@Command(name = "consume", mixinStandardHelpOptions = true, description = "Print event payloads, one per line.")
final class ConsumeCommand extends SubCommand {
    @Mixin
    ClientOptions clientOptions;
    @Option(names = "--topic", required = true, paramLabel = "T", description = "topic to read")
    String topic;
    @Option(names = "--group", paramLabel = "G", description = "consume as a member of group G (partitions shared with "
            + "other members; committed offsets are used and each printed batch is committed)")
    String group;
    @Option(names = "--from-beginning", description = "without a committed offset start at the first retained event (default: the end)")
    boolean fromBeginning;
    @Option(names = "--max", paramLabel = "N", description = "exit after N events (exit 1 if --timeout-ms passes first)")
    Long maxOption;
    @Option(names = "--timeout-ms", paramLabel = "MS", description = "exit when no event arrived for MS milliseconds (default: wait forever)")
    Long timeoutOption;
    @Option(names = "--print-key", description = "print KEY<TAB>VALUE")
    boolean printKey;

    ConsumeCommand(PrintStream out, PrintStream err) {
        super(out, err);
    }

    @Override
    int execute() throws UsageException {
        long max = maxOption == null ? Long.MAX_VALUE : check("--max", maxOption, 1, Long.MAX_VALUE);
        long timeoutMillis = timeoutOption == null ? Long.MAX_VALUE : check("--timeout-ms", timeoutOption, 1, Long.MAX_VALUE);
        ClientConfig client = clientOptions.clientConfig("sluice-consume");
        ConsumerConfig config;
        try {
            config = ConsumerConfig.builder()
                    .groupId(group)
                    .clientId("sluice-consume")
                    .offsetReset(fromBeginning ? OffsetReset.EARLIEST : OffsetReset.LATEST)
                    .build();
        } catch (SluiceException e) {
            throw new UsageException(e.getMessage());
        }
        long printed = 0;
        try (RemoteConsumer consumer = new RemoteConsumer(client, config)) {
            if (group != null) {
                consumer.subscribe(topic);
            } else {
                consumer.assign(partitionsOf(client, topic));
            }
            long lastRecordNanos = System.nanoTime();
            while (printed < max) {
                List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(Math.min(500, timeoutMillis)));
                if (records.isEmpty()) {
                    if ((System.nanoTime() - lastRecordNanos) / 1_000_000 >= timeoutMillis) {
                        break;
                    }
                    continue;
                }
                lastRecordNanos = System.nanoTime();
                Map<TopicPartition, Long> done = new HashMap<>();
                for (ConsumerRecord r : records) {
                    if (printed == max) {
                        break;
                    }
                    out.println(printKey ? r.keyAsString() + "\t" + r.valueAsString() : r.valueAsString());
                    done.put(r.topicPartition(), r.offset() + 1);
                    printed++;
                }
                out.flush();
                if (group != null) {
                    consumer.commitSync(done);
                }
            }
        } catch (SluiceException e) {
            err.println("sluice consume: " + e.getMessage() + " (" + printed + " events printed)");
            return SluiceCli.FAILED;
        }
        if (max != Long.MAX_VALUE && printed < max) {
            err.println("sluice consume: only " + printed + " of " + max + " events arrived within --timeout-ms=" + timeoutMillis);
            return SluiceCli.FAILED;
        }
        return SluiceCli.OK;
    }

    static Set<TopicPartition> partitionsOf(ClientConfig client, String topic) {
        try (RemoteAdmin admin = new RemoteAdmin(client)) {
            TopicDescription d = admin.describeTopic(topic);
            Set<TopicPartition> partitions = new TreeSet<>();
            for (TopicDescription.PartitionInfo p : d.partitions()) {
                partitions.add(new TopicPartition(topic, p.partition()));
            }
            return partitions;
        }
    }
}
