package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"time"

	benchv1alpha1 "github.com/benchrun/benchrun/api/v1alpha1"
)

// TargetKind summarises a target for status and the printer column:
// hetu, redis/single, valkey/ha, redis/proxy, external/redis, external/hetu.
func TargetKind(t *benchv1alpha1.TargetSpec) string {
	switch {
	case t.HeTu != nil:
		return "hetu"
	case t.Redis != nil:
		engine := string(t.Redis.Engine)
		if engine == "" {
			engine = string(benchv1alpha1.EngineRedis)
		}
		mode := string(t.Redis.Mode)
		if mode == "" {
			mode = string(benchv1alpha1.RedisSingle)
		}
		return engine + "/" + mode
	case t.External != nil:
		return "external/" + string(t.External.Kind)
	}
	return "unknown"
}

func metaNow(t time.Time) metav1.Time { return metav1.NewTime(t) }
