package io.sluice.ingest.internal;

import io.sluice.ingest.PipelineState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one restart loop of an ingest pipeline, on its own named thread: runs the body; when it throws, decides by
 * {@link Supervision#decide} — stop for good ({@link PipelineState#FAILED}), wait for the topic, or start again from
 * the committed offsets after a backoff ({@link Backoff}) for as long as the failure lasts. The body returns normally
 * only when the loop is stopping.
 */
final class SupervisedLoop {
    private static final Logger LOG = LoggerFactory.getLogger(SupervisedLoop.class);

    /** What the loop runs. Both methods are called on the loop's thread. */
    interface Body {
        /** Runs until {@code running} turns false (then returns) or fails (throws). */
        void run(Backoff backoff) throws Exception;

        /** After a failure, before the backoff: drop the state of the failed attempt. */
        void abandon();
    }

    private final String name;
    private final Supervision supervision;
    private final Supervision.MissingTopic missingTopic;
    private final Backoff backoff;
    private final Body body;
    private final Thread thread;
    private volatile boolean running = true;

    SupervisedLoop(String name, String threadName, Supervision supervision, Supervision.MissingTopic missingTopic,
                   Backoff backoff, Body body) {
        this.name = name;
        this.supervision = supervision;
        this.missingTopic = missingTopic;
        this.backoff = backoff;
        this.body = body;
        this.thread = new Thread(this::run, threadName);
    }

    void start() {
        thread.start();
    }

    boolean running() {
        return running;
    }

    private void run() {
        while (running) {
            try {
                body.run(backoff);
                break;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (Throwable t) {
                Supervision.Decision decision = Supervision.decide(t, missingTopic);
                if (decision == Supervision.Decision.STOP) {
                    supervision.failed(t);
                    LOG.error("ingest {} stopped: {}", name, t.toString(), t);
                    break;
                }
                body.abandon();
                if (!running) {
                    break;
                }
                String why = t.getMessage() != null ? t.getMessage() : t.toString();
                if (decision == Supervision.Decision.WAIT_FOR_TOPIC) {
                    if (supervision.waitingForTopic("waiting for the topic to be created: " + why)) {
                        LOG.warn("ingest {}: {}; waiting for it to be created (looked for again after a backoff)", name, why);
                    }
                } else {
                    supervision.retrying(why);
                    supervision.restarted();
                    LOG.warn("ingest {}: {}; starting again from the committed offsets after a backoff", name, t.toString());
                }
                try {
                    backoff.pause(() -> !running);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        supervision.closed();
    }

    /** Asks the body to return, waits for the thread. Safe to call twice. */
    void stop() {
        running = false;
        if (thread.isAlive() && thread != Thread.currentThread()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
