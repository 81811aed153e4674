package io.sluice.net.client.internal;

import java.util.concurrent.CompletableFuture;

/**
 * Queued by {@code flush()} behind every record sent before it. When the sender reaches it, it forces every open
 * batch out (ignoring linger) and completes once each batch that was open, ready or in flight at that moment finished.
 * Confined to the producer's event loop, except {@link #done}.
 */
final class FlushMarker {
    final CompletableFuture<Void> done = new CompletableFuture<>();
    private int remaining;

    void waitFor(ProducerBatch batch) {
        remaining++;
        batch.addMarker(this);
    }

    void batchDone() {
        if (--remaining == 0) {
            done.complete(null);
        }
    }

    void armed() {
        if (remaining == 0) {
            done.complete(null);
        }
    }
}
