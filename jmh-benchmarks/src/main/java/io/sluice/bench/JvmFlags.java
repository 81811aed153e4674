package io.sluice.bench;

/**
 * The root pom's {@code sluice.jvm.args}, as compile-time constants for JMH's {@code @Fork(jvmArgsAppend = ...)}
 * (annotations cannot read build properties). Keep in step with the root pom; {@code bin/sluice-bench} reads the
 * pom's value itself from {@code target/jvm.options}.
 */
public final class JvmFlags {
    public static final String EXPORT_REF = "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED";
    public static final String EXPORT_NIO = "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED";
    public static final String EXPORT_MISC = "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED";
    public static final String EXPORT_JAVAC = "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED";
    public static final String OPEN_JAVAC = "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED";
    public static final String OPEN_LANG = "--add-opens=java.base/java.lang=ALL-UNNAMED";
    public static final String OPEN_REFLECT = "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED";
    public static final String OPEN_IO = "--add-opens=java.base/java.io=ALL-UNNAMED";
    public static final String OPEN_UTIL = "--add-opens=java.base/java.util=ALL-UNNAMED";
    /** Sluice never sends usage data: Chronicle's analytics and announcer are off in every JVM. */
    public static final String NO_ANALYTICS = "-Dchronicle.analytics.disable=true";
    public static final String NO_ANNOUNCER = "-Dchronicle.announcer.disable=true";
    /** Keeps Sluice's and Chronicle's INFO lines out of JMH's output. */
    public static final String QUIET_LOG = "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn";

    private JvmFlags() {
    }
}
