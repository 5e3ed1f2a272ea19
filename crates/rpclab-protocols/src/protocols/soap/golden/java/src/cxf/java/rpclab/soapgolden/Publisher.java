package rpclab.soapgolden;

import rpclab.shared.BenchWs;
import java.io.File;
import java.nio.file.Files;
import javax.servlet.ServletConfig;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.cxf.jaxws.EndpointImpl;
import org.apache.cxf.transport.servlet.CXFNonSpringServlet;

/** Apache CXF: the JAX-WS frontend on CXFNonSpringServlet in Tomcat 9, as servers/cxf (mapped at /*). */
final class Publisher {
    private Publisher() {}

    public static final class Servlet extends CXFNonSpringServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void loadBus(ServletConfig config) {
            super.loadBus(config);
            new EndpointImpl(getBus(), new BenchWs()).publish("/bench");
        }
    }

    static AutoCloseable publish(int port) throws Exception {
        File base = Files.createTempDirectory("rpclab-tomcat").toFile();
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(base.getAbsolutePath());
        Connector connector = new Connector("org.apache.coyote.http11.Http11NioProtocol");
        connector.setPort(port);
        connector.setProperty("address", "127.0.0.1");
        tomcat.getService().addConnector(connector);
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", base.getAbsolutePath());
        // exec:java runs this in its own class loader, which the webapp's must see.
        context.setParentClassLoader(Publisher.class.getClassLoader());
        Tomcat.addServlet(context, "cxf", new Servlet()).setLoadOnStartup(1);
        context.addServletMappingDecoded("/*", "cxf");
        tomcat.start();
        System.out.println("published with CXF " + org.apache.cxf.version.Version.getCurrentVersion());
        return () -> {
            tomcat.stop();
            tomcat.destroy();
        };
    }
}
