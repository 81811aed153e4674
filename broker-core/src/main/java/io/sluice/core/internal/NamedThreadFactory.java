package io.sluice.core.internal;

import java.util.concurrent.ThreadFactory;

/** Daemon threads with a fixed, readable name: every Sluice thread says what it is in a thread dump. */
public final class NamedThreadFactory implements ThreadFactory {
    private final String name;

    public NamedThreadFactory(String name) {
        this.name = name;
    }

    @Override
    public Thread newThread(Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
