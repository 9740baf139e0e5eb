from django.urls import path

from . import views

app_name = "judging"

urlpatterns = [
    path("feedback/", views.feedback, name="feedback"),
    path("feedback/previous/", views.previous, name="feedback_previous"),
    path("feedback/slots/<int:slot_id>/grade/", views.grade, name="feedback_grade"),
    path("feedback/slots/<int:slot_id>/skip/", views.skip, name="feedback_skip"),
    path("feedback/slots/<int:slot_id>/undo/", views.undo, name="feedback_undo"),
    path("feedback/results/<int:snapshot_id>/unskip/", views.unskip, name="feedback_unskip"),
]
