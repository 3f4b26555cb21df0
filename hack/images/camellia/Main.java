package io.benchrun.proxy;

import com.netease.nim.camellia.redis.proxy.springboot.EnableCamelliaRedisProxyServer;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * camellia-redis-proxy as a Spring Boot application: the read/write-splitting proxy target of
 * benchrun (internal/target/proxy.go runs it with --spring.config.location pointing at the
 * rendered application.yml). The class must live in a named package for component scanning.
 */
@SpringBootApplication
@EnableCamelliaRedisProxyServer
public class Main {
    public static void main(String[] args) {
        SpringApplication.run(Main.class, args);
    }
}
