package warmup;

/** A source root added by build-helper-maven-plugin, as servers add contract/java. */
public class X {}
