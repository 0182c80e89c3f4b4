"""The numbers and names the deploy files share with the binary, in one place: read by
consistency.py (the files: compose, Kubernetes probes and Services, the KEDA trigger, systemd) and
by tests/fleet/fleet.py (the same files running as containers)."""

# ports: coordinator gRPC, coordinator HTTP (status page, /metrics), worker HTTP (/metrics)
GRPC_PORT, COORD_HTTP_PORT, WORKER_HTTP_PORT = 7700, 7780, 7781
# the gRPC health service the Kubernetes probes ask
HEALTH_SERVICE = "cubefleet.v1.Coordinator"
# seconds a worker's drain takes at most after SIGTERM (`cubefleet worker --grace` default)
WORKER_DRAIN_S = 30
# the coordinator metric the autoscaler follows
AUTOSCALE_METRIC = "cubefleet_queued_work_seconds"
NAMESPACE = "cubefleet"
