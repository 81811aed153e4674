package io.sluice.core.internal.journal;

import io.sluice.core.SluiceException;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Chronicle Queue reaches into JDK internals; on Java 17+ that needs {@code --add-exports}/{@code --add-opens}
 * flags. Without them it fails deep inside with an {@code IllegalAccessException}; {@link #check()} fails at once
 * instead, naming every missing flag and the argument file that carries them ({@code java @sluice.jvmopts ...}).
 * The check compares what the running JVM exports and opens to Sluice's module (the unnamed module on a class
 * path) with {@link #REQUIRED}; a module the runtime does not have (a JRE without {@code jdk.compiler}) is skipped.
 * {@code -Dsluice.jvm.check=false} turns the check off.
 */
public final class JvmFlags {
    /** The flags, as in the root pom's {@code sluice.chronicle.opens} and {@code sluice.jvmopts}. */
    public static final List<String> REQUIRED = List.of(
            "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
            "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
            "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
            "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED");

    private JvmFlags() {
    }

    /** The required flags this JVM was not started with (empty when all are in place). */
    public static List<String> missing() {
        Module sluice = JvmFlags.class.getModule();
        List<String> missing = new ArrayList<>();
        for (String flag : REQUIRED) {
            boolean opens = flag.startsWith("--add-opens=");
            String target = flag.substring(flag.indexOf('=') + 1, flag.lastIndexOf('='));
            String moduleName = target.substring(0, target.indexOf('/'));
            String pkg = target.substring(target.indexOf('/') + 1);
            Optional<Module> module = ModuleLayer.boot().findModule(moduleName);
            if (module.isEmpty() || !module.get().getPackages().contains(pkg)) {
                continue;
            }
            boolean granted = opens ? module.get().isOpen(pkg, sluice) : module.get().isExported(pkg, sluice);
            if (!granted) {
                missing.add(flag);
            }
        }
        return missing;
    }

    /** @throws SluiceException.InvalidConfigException listing the missing flags */
    public static void check() {
        if ("false".equalsIgnoreCase(System.getProperty("sluice.jvm.check"))) {
            return;
        }
        List<String> missing = missing();
        if (!missing.isEmpty()) {
            throw new SluiceException.InvalidConfigException("the JVM lacks flags Chronicle Queue (Sluice's journal) needs on Java 17+: "
                    + String.join(" ", missing) + ". Start it with all of them, most simply with the argument file shipped"
                    + " next to sluice.jar: java @sluice.jvmopts ... (full list: " + String.join(" ", REQUIRED)
                    + " -Dchronicle.analytics.disable=true -Dchronicle.announcer.disable=true)");
        }
    }
}
