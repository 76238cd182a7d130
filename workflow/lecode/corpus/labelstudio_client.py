"""Push the review tasks to a running Label Studio server and pull its export, over its
HTTP API (token authentication: ``Authorization: Token <key>``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx


class LabelStudioError(RuntimeError):
    pass


class LabelStudio:
    def __init__(self, url: str, token: str, timeout: float = 60.0) -> None:
        self.http = httpx.Client(
            base_url=url.rstrip("/"),
            headers={"Authorization": f"Token {token}"},
            timeout=timeout,
        )

    def _call(self, method: str, path: str, **kw: Any) -> Any:
        r = self.http.request(method, path, **kw)
        if r.status_code >= 400:
            raise LabelStudioError(f"{method} {path}: HTTP {r.status_code}: {r.text[:300]}")
        return r.json()

    def create_project(self, title: str, config: str) -> int:
        return int(
            self._call("POST", "/api/projects", json={"title": title, "label_config": config})["id"]
        )

    def import_tasks(self, project: int, tasks: Sequence[dict[str, Any]]) -> int:
        return int(
            self._call("POST", f"/api/projects/{project}/import", json=list(tasks))["task_count"]
        )

    def task_ids(self, project: int) -> list[int]:
        out: list[int] = []
        page = 1
        while True:
            got = self._call(
                "GET", "/api/tasks", params={"project": project, "page": page, "page_size": 100}
            )
            items = got["tasks"] if isinstance(got, dict) else got
            out += [int(t["id"]) for t in items]
            total = got.get("total", len(out)) if isinstance(got, dict) else len(out)
            if not items or len(out) >= total:
                return out
            page += 1

    def task(self, task_id: int) -> dict[str, Any]:
        return dict(self._call("GET", f"/api/tasks/{task_id}"))

    def annotate(self, task_id: int, result: Sequence[dict[str, Any]]) -> int:
        return int(
            self._call("POST", f"/api/tasks/{task_id}/annotations", json={"result": list(result)})[
                "id"
            ]
        )

    def export(self, project: int) -> list[dict[str, Any]]:
        return list(
            self._call("GET", f"/api/projects/{project}/export", params={"exportType": "JSON"})
        )

    def users(self) -> dict[str, str]:
        """``{user id: e-mail}`` of the organisation."""
        got = self._call("GET", "/api/users")
        return {str(u["id"]): str(u.get("email") or u["id"]) for u in got}


def push(client: LabelStudio, title: str, config: str, tasks_file: str | Path) -> int:
    """A new project with the shipped configuration and the tasks of ``tasks_file``."""
    project = client.create_project(title, config)
    client.import_tasks(project, json.loads(Path(tasks_file).read_text(encoding="utf-8")))
    return project


def pull(client: LabelStudio, project: int, out: str | Path) -> dict[str, str]:
    """The project's JSON export written to ``out``; returns ``{user id: e-mail}``."""
    data = client.export(project)
    Path(out).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return client.users()
