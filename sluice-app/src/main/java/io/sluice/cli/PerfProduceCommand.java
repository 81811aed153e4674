package io.sluice.cli;

import io.sluice.core.Acks;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.client.RemoteAdmin;
import io.sluice.net.client.RemoteProducer;
import io.sluice.net.client.RemoteProducerConfig;
import org.HdrHistogram.Histogram;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code sluice perf-produce}: C client threads, each with its own {@link RemoteProducer} (own connection), send N
 * records of B random bytes in total. Asynchronous by default (latency = send call to acknowledgement, so it includes
 * time queued in the client when the rate is unlimited); {@code --sync} waits for each acknowledgement before the
 * next send (latency = one produce round trip). Stops at the first error (for example the broker went away) and
 * still prints the final JSON line with what was acknowledged.
 */
@Command(name = "perf-produce", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Produce load: C client threads, one connection each, send N records of B random bytes in total.",
                "Without --warmup-records the clock starts before the clients connect (as Kafka's ProducerPerformance); with "
                        + "it, once every client is connected and warmed up. Prints progress each second on stderr, "
                        + "then a summary and a final JSON line on stdout."})
final class PerfProduceCommand extends SubCommand {
    @Mixin
    ClientOptions clientOptions;
    @Option(names = "--topic", required = true, paramLabel = "T", description = "topic to produce to")
    String topic;
    @Option(names = "--records", required = true, paramLabel = "N", description = "records to send in total")
    long records;
    @Option(names = "--record-size", required = true, paramLabel = "B", description = "bytes per record")
    int recordSize;
    @Option(names = "--rate", paramLabel = "R", defaultValue = "0", description = "records/s over all clients (default: unlimited)")
    long rate;
    @Option(names = "--acks", paramLabel = "MODE", defaultValue = "journal", description = "memory, journal or sync (default: ${DEFAULT-VALUE})")
    String acksName;
    @Option(names = "--clients", paramLabel = "C", defaultValue = "1", description = "client threads, one connection each (default: ${DEFAULT-VALUE})")
    int clients;
    @Option(names = "--sync", description = "one record at a time per client, waiting for its acknowledgement")
    boolean sync;
    @Option(names = "--partitions", paramLabel = "P", description = "create the topic with P partitions if it does not exist")
    Integer partitions;
    @Option(names = "--batch-size", paramLabel = "BYTES", defaultValue = "65536", description = "RemoteProducer batch size (default: ${DEFAULT-VALUE})")
    int batchSize;
    @Option(names = "--linger-us", paramLabel = "US", defaultValue = "0", description = "RemoteProducer linger (default: ${DEFAULT-VALUE})")
    long lingerMicros;
    @Option(names = "--max-in-flight", paramLabel = "K", defaultValue = "8", description = "RemoteProducer requests in flight (default: ${DEFAULT-VALUE})")
    int maxInFlight;
    @Option(names = "--warmup-records", paramLabel = "W", defaultValue = "0",
            description = "records each client sends first, not measured (JIT warm-up; default: ${DEFAULT-VALUE})")
    long warmup;

    PerfProduceCommand(PrintStream out, PrintStream err) {
        super(out, err);
    }

    @Override
    int execute() throws UsageException {
        check("--records", records, 1, Long.MAX_VALUE);
        check("--record-size", recordSize, 0, 64 << 20);
        check("--rate", rate, 0, Long.MAX_VALUE);
        check("--clients", clients, 1, 1024);
        check("--batch-size", batchSize, 1, 64 << 20);
        check("--linger-us", lingerMicros, 0, 60_000_000);
        check("--max-in-flight", maxInFlight, 1, 1024);
        check("--warmup-records", warmup, 0, Long.MAX_VALUE);
        if (partitions != null) {
            check("--partitions", partitions, 1, TopicConfig.MAX_PARTITIONS);
        }
        Acks acks;
        try {
            acks = Acks.parse(acksName);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        ClientConfig client = clientOptions.clientConfig("sluice-perf");
        RemoteProducerConfig.Builder producerConfig = RemoteProducerConfig.builder(client)
                .producer(ProducerConfig.builder().acks(acks).build())
                .batchSizeBytes(batchSize)
                .lingerMicros(lingerMicros)
                .maxInFlightRequests(maxInFlight);
        if (partitions != null) {
            try (RemoteAdmin admin = new RemoteAdmin(client)) {
                admin.createTopicIfAbsent(TopicConfig.of(topic, partitions));
            } catch (SluiceException e) {
                err.println("sluice perf-produce: " + e.getMessage());
                return SluiceCli.FAILED;
            }
        }

        Run run = new Run(records, recordSize, rate, clients, sync, topic, warmup);
        // without a warm-up the clock starts before the clients connect, as Kafka's ProducerPerformance, whose first send
        // connects and reads metadata inside its clock; with one, after every client is connected and warmed up
        long beforeConnect = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            long share = records / clients + (c < records % clients ? 1 : 0);
            int index = c;
            Thread t = new Thread(() -> run.client(index, share, producerConfig.build()), "sluice-perf-client-" + c);
            threads.add(t);
            t.start();
        }
        try {
            run.ready.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            run.stop.set(true);
        }
        long start = warmup == 0 ? beforeConnect : System.nanoTime();
        run.go.countDown();
        Thread progress = Perf.progress(err, "sent", run.sent, "acknowledged", run.acked, run.done);
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                run.stop.set(true);
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        run.done.set(true);
        progress.interrupt();
        Histogram latency = new Histogram(TimeUnit.HOURS.toMicros(1), 3);
        for (Histogram h : run.histograms) {
            latency.add(h);
        }
        Throwable error = run.firstError.get();
        PerfReport.print(out, "perf-produce", run.sent.sum(), run.acked.sum(), run.errors.sum(),
                run.acked.sum() * recordSize, seconds, latency, error == null ? null : error.getMessage());
        return error == null && run.acked.sum() == records ? SluiceCli.OK : SluiceCli.FAILED;
    }

    /** State shared by the client threads of one run. */
    private static final class Run {
        final long records;
        final int recordSize;
        final long ratePerClient;
        final boolean sync;
        final String topic;
        final LongAdder sent = new LongAdder();
        final LongAdder acked = new LongAdder();
        final LongAdder errors = new LongAdder();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicBoolean done = new AtomicBoolean();
        final AtomicReference<Throwable> firstError = new AtomicReference<>();
        final List<Histogram> histograms = new ArrayList<>();
        final long warmup;
        /** Counted down by each client once connected and warmed up; the clock starts after all. */
        final CountDownLatch ready;
        final CountDownLatch go = new CountDownLatch(1);

        Run(long records, int recordSize, long rate, int clients, boolean sync, String topic, long warmup) {
            this.warmup = warmup;
            this.ready = new CountDownLatch(clients);
            this.records = records;
            this.recordSize = recordSize;
            this.ratePerClient = rate == 0 ? 0 : Math.max(1, rate / clients);
            this.sync = sync;
            this.topic = topic;
            for (int i = 0; i < clients; i++) {
                histograms.add(new Histogram(TimeUnit.HOURS.toMicros(1), 3));
            }
        }

        void fail(Throwable e) {
            errors.increment();
            firstError.compareAndSet(null, e);
            stop.set(true);
        }

        /**
         * One client: its histogram is written by the producer's I/O thread (async: the callbacks) or by this thread
         * (sync), one writer either way; it is read after {@code close()} returned.
         */
        void client(int index, long count, RemoteProducerConfig config) {
            Histogram histogram = histograms.get(index);
            byte[] value = new byte[recordSize];
            new SplittableRandom(index).nextBytes(value);
            long intervalNanos = ratePerClient == 0 ? 0 : 1_000_000_000L / ratePerClient;
            RemoteProducer producer;
            try {
                producer = new RemoteProducer(config);
            } catch (SluiceException e) {
                fail(e);
                ready.countDown();
                return;
            }
            try {
                try {
                    for (long i = 0; i < warmup; i++) {
                        producer.send(ProducerRecord.of(topic, value)).get();
                    }
                    producer.partitionCount(topic); // resolves the topic before the clock starts
                    producer.flush();
                } catch (ExecutionException e) {
                    fail(e.getCause());
                } catch (SluiceException e) {
                    fail(e);
                } finally {
                    ready.countDown();
                }
                go.await();
                long begin = System.nanoTime();
                for (long i = 0; i < count && !stop.get(); i++) {
                    if (intervalNanos > 0) {
                        long due = begin + i * intervalNanos;
                        long wait;
                        while ((wait = due - System.nanoTime()) > 0) {
                            LockSupport.parkNanos(wait);
                        }
                    }
                    ProducerRecord record = ProducerRecord.of(topic, value);
                    long sentAt = System.nanoTime();
                    sent.increment();
                    if (sync) {
                        try {
                            producer.send(record).get();
                            histogram.recordValue(Math.max(0, (System.nanoTime() - sentAt) / 1_000));
                            acked.increment();
                        } catch (ExecutionException e) {
                            fail(e.getCause());
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            fail(e);
                        }
                    } else {
                        producer.send(record, (partition, offset, error) -> {
                            if (error != null) {
                                fail(error);
                            } else {
                                histogram.recordValue(Math.max(0, (System.nanoTime() - sentAt) / 1_000));
                                acked.increment();
                            }
                        });
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail(e);
            } finally {
                producer.close();
            }
        }
    }
}
