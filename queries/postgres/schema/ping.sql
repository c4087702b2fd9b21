-- ping: answers when the server takes queries (health checks).
SELECT 1
