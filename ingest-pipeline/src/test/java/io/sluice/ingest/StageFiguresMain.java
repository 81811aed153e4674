package io.sluice.ingest;

import io.sluice.ingest.bench.IngestStageRunner;
import io.sluice.ingest.testing.ClickHouseServer;
import io.sluice.ingest.testing.RedisServer;

/** Runs {@link IngestStageRunner} against the private test servers: {@code --scale X}. Not a test. */
public final class StageFiguresMain {
    private StageFiguresMain() {
    }

    public static void main(String[] args) {
        String scale = args.length > 0 ? args[0] : "1.0";
        String stages = args.length > 1 ? args[1] : "all";
        IngestStageRunner.main(new String[]{"--clickhouse", ClickHouseServer.shared().url(), "--redis", RedisServer.shared().url(),
                "--scale", scale, "--stages", stages});
        System.exit(0);
    }
}
