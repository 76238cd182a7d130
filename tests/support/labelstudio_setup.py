"""Run with the Label Studio environment's Python (``.venv-labelstudio``), beside a server
started on the same data directory: enables token authentication for the organisation and
makes the annotators' accounts. Prints ``{email: token}`` as JSON."""

from __future__ import annotations

import json
import os
import sys

import label_studio  # noqa: E402

sys.path.insert(0, os.path.dirname(label_studio.__file__))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "core.settings.label_studio")
import django  # noqa: E402

django.setup()

from jwt_auth.models import JWTSettings  # noqa: E402
from organizations.models import Organization, OrganizationMember  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402
from users.models import User  # noqa: E402

org = Organization.objects.first()
settings, _ = JWTSettings.objects.get_or_create(organization=org)
settings.legacy_api_tokens_enabled = True
settings.save()
tokens = {}
for email in sys.argv[1:]:
    user = User.objects.filter(email=email).first()
    if user is None:
        user = User.objects.create_user(email=email, password="lecode-test-pw")
    OrganizationMember.objects.get_or_create(user=user, organization=org)
    user.active_organization = org
    user.save()
    tokens[email] = Token.objects.get_or_create(user=user)[0].key
print(json.dumps(tokens))
