package io.sluice.testkit;

/**
 * A server that tests talk to: either a private process this JVM started ({@link ServerProcess}), which tests may
 * stop, SIGKILL, SIGSTOP/SIGCONT and start again, or an external one named by an environment variable, which they
 * may only use. The lifecycle calls on an external server throw {@link IllegalStateException}.
 */
public abstract class ServerHandle {
    private final ServerProcess process;
    private final String externalVariable;

    /**
     * @param process          the private process, or null for an external server
     * @param externalVariable the environment variable that names an external server (for the error message)
     */
    protected ServerHandle(ServerProcess process, String externalVariable) {
        this.process = process;
        this.externalVariable = externalVariable;
    }

    /** True when this JVM owns the server process (so it may be stopped and restarted). */
    public boolean isPrivate() {
        return process != null;
    }

    /** Graceful stop (SIGTERM), waiting for the process to exit. */
    public void stop() {
        requirePrivate().stop();
    }

    /** SIGKILL: the server gets no chance to flush anything. */
    public void kill() {
        requirePrivate().kill();
    }

    /** Starts the server again (same ports, same data) and waits until it answers. */
    public void start() {
        requirePrivate().start();
    }

    public void restart() {
        requirePrivate().restart();
    }

    /** SIGSTOP: the server holds its connections and answers nothing until {@link #resume()}. */
    public void pause() {
        requirePrivate().pause();
    }

    /** SIGCONT after {@link #pause()}. */
    public void resume() {
        requirePrivate().resume();
    }

    /** The private server's process id, or -1 when it is not running. */
    public long pid() {
        return requirePrivate().pid();
    }

    /** True while the private process lives (a paused one too); always true for an external server. */
    public boolean isRunning() {
        return process == null || process.isRunning();
    }

    /** Stops the private process and deletes its directory. */
    protected void closeProcess() {
        if (process != null) {
            process.close();
        }
    }

    private ServerProcess requirePrivate() {
        if (process == null) {
            throw new IllegalStateException(externalVariable + " points at an external server: it cannot be stopped by tests");
        }
        return process;
    }
}
