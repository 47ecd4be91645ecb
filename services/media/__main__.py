from services.media.service import run

run()
