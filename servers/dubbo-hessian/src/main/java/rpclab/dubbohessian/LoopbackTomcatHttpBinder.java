package rpclab.dubbohessian;

import com.alibaba.dubbo.common.Constants;
import com.alibaba.dubbo.common.URL;
import com.alibaba.dubbo.remoting.http.HttpBinder;
import com.alibaba.dubbo.remoting.http.HttpHandler;
import com.alibaba.dubbo.remoting.http.HttpServer;
import com.alibaba.dubbo.remoting.http.servlet.DispatcherServlet;
import com.alibaba.dubbo.remoting.http.servlet.ServletManager;
import com.alibaba.dubbo.remoting.http.support.AbstractHttpServer;
import java.io.File;
import java.nio.file.Files;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

/**
 * Dubbo 2.6's "tomcat" HTTP binder (the servlet container of Dubbo's
 * hessian and webservice protocols: Dubbo's DispatcherServlet at /* in an
 * embedded Tomcat), except that the connector is bound to RPCLAB_BIND
 * (default 127.0.0.1).
 *
 * <p>Why: Dubbo's own TomcatHttpServer sets only the port, so Tomcat listens
 * on every interface, and it starts Tomcat in its constructor, so a subclass
 * cannot change the address first. Dubbo 2.6's ExtensionLoader cannot
 * override the built-in "tomcat" name, so this one is registered as
 * "rpclab-tomcat" (META-INF/dubbo/com.alibaba.dubbo.remoting.http.HttpBinder)
 * and selected with the protocol's server=rpclab-tomcat. The connector is
 * set up as Dubbo's: NIO, maxThreads = the protocol's threads, no limit on
 * keep-alive requests, 60 s connection timeout.
 */
public class LoopbackTomcatHttpBinder implements HttpBinder {
    public static final String NAME = "rpclab-tomcat";

    @Override
    public HttpServer bind(URL url, HttpHandler handler) {
        return new LoopbackTomcatHttpServer(url, handler);
    }

    static final class LoopbackTomcatHttpServer extends AbstractHttpServer {
        private final Tomcat tomcat;
        private final URL url;

        LoopbackTomcatHttpServer(URL url, HttpHandler handler) {
            super(url, handler);
            this.url = url;
            DispatcherServlet.addHttpHandler(url.getPort(), handler);
            try {
                File base = Files.createTempDirectory("rpclab-tomcat").toFile();
                base.deleteOnExit();
                tomcat = new Tomcat();
                tomcat.setBaseDir(base.getAbsolutePath());
                Connector connector = new Connector("org.apache.coyote.http11.Http11NioProtocol");
                connector.setPort(url.getPort());
                connector.setProperty("address", BenchProvider.BIND);
                connector.setProperty("maxThreads",
                        String.valueOf(url.getParameter(Constants.THREADS_KEY, Constants.DEFAULT_THREADS)));
                connector.setProperty("maxConnections", String.valueOf(url.getParameter(Constants.ACCEPTS_KEY, -1)));
                connector.setProperty("URIEncoding", "UTF-8");
                connector.setProperty("connectionTimeout", "60000");
                connector.setProperty("maxKeepAliveRequests", "-1");
                tomcat.getService().addConnector(connector);
                tomcat.setConnector(connector);
                Context context = tomcat.addContext("", base.getAbsolutePath());
                Tomcat.addServlet(context, "dispatcher", new DispatcherServlet()).setLoadOnStartup(1);
                context.addServletMappingDecoded("/*", "dispatcher");
                ServletManager.getInstance().addServletContext(url.getPort(), context.getServletContext());
                tomcat.start();
            } catch (Exception e) {
                throw new IllegalStateException("cannot start Tomcat on " + BenchProvider.BIND + ":" + url.getPort(), e);
            }
        }

        @Override
        public void close() {
            super.close();
            ServletManager.getInstance().removeServletContext(url.getPort());
            try {
                tomcat.stop();
                tomcat.destroy();
            } catch (Exception e) {
                System.err.println("rpclab: Tomcat stop failed: " + e);
            }
        }
    }
}
