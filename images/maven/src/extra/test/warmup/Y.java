package warmup;

/** A test source root added by build-helper-maven-plugin. */
class Y {}
