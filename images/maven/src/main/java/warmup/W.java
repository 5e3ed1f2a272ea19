package warmup;

/** A class to compile, so that the compiler plugin runs. */
public class W {
    public static String hello(String name) {
        return "hello " + name;
    }
}
